"""benchmarks/makespan.py, tried on fakelinux (the real figures take a real
tree and most of an hour)."""

from __future__ import annotations

import re

from benchmarks import makespan


def test_modes_give_the_budget_each_way():
    assert makespan.mode_args("serial", 4, 2) == ["--kbuild-jobserver=off", "--kbuild-jobs=4"]
    assert makespan.mode_args("oversubscribed", 4, 2) == [
        "-n",
        "2",
        "--kbuild-jobserver=off",
        "--kbuild-jobs=4",
    ]
    assert makespan.mode_args("shared", 4, 2) == ["-n", "2", "--kbuild-jobserver=4"]
    assert makespan.mode_args("split", 4, 2)[-1] == "--kbuild-jobs=2"


def test_dry_run_prints_the_commands(capsys, fakelinux):
    makespan.main(["--tree", str(fakelinux), "--dry-run"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("machine: ") and "6 builds (x86_64 arm64 riscv i386 arm arc;" in out[0]
    assert [line.split(":")[0] for line in out[1:]] == ["serial", "oversubscribed", "shared"]
    assert out[1].split()[:3] == ["serial:", "nice", "-n"]


def test_two_builds_on_fakelinux(capsys, fakelinux, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    makespan.main(
        ["--tree", str(fakelinux), "--builds", "2", "--runs", "1", "--nice", "0"]
        + ["--modes", "serial", "shared"]
    )
    out = capsys.readouterr().out
    assert re.search(r"^run 1: serial [\d.]+ s \([\d.]+ CPU s\) [\d.]+; shared ", out, re.M)
    assert re.search(
        r"^median wall/ideal over 1 runs on \d+ cores: serial [\d.]+, shared ", out, re.M
    )
