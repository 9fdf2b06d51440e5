"""benchmarks/tuxmake.py without TuxMake: the commands each side would run
(--dry-run) and how commands run a given number at a time. The real figure
takes TuxMake from pip and a real tree."""

from __future__ import annotations

import shutil

import pytest

from benchmarks import tuxmake
from benchmarks.measure import max_running


def dry_run(capsys, fakelinux, *args):
    tuxmake.main(["--tree", str(fakelinux), "--tuxmake", shutil.which("true"), "--dry-run", *args])
    return capsys.readouterr().out.splitlines()


def side_of(line):
    return line.split(" (")[0]


def test_one_arch_compares_the_kbuild_cli(capsys, fakelinux):
    out = dry_run(capsys, fakelinux)
    assert "1 build(s): x86_64 gcc tinyconfig config kernel" in out[0]
    commands = [ln for ln in out[2:] if " at a time): " in ln]
    assert [side_of(ln) for ln in commands] == ["tuxmake", "kbuild"]
    assert all("--jobs=" in ln and "--wrapper=none" in ln for ln in commands)


def test_several_arches_compare_a_matrix(capsys, fakelinux):
    out = dry_run(capsys, fakelinux, "--arches", "x86_64", "arm64", "riscv")
    commands = [ln for ln in out[2:] if " at a time): " in ln]
    assert [side_of(ln) for ln in commands] == ["tuxmake"] * 3 + ["pytest"] + [
        "tuxmake-parallel"
    ] * 3
    (pytest_line,) = [ln for ln in commands if ln.startswith("pytest")]
    assert pytest_line.endswith(" -n auto") and "--kbuild-jobs" not in pytest_line
    assert all("2 at a time" in ln for ln in commands if ln.startswith("tuxmake-parallel"))
    assert "arch: [x86_64, arm64, riscv]" in out


def test_commands_run_the_given_number_at_a_time(tmp_path):
    joblog = tmp_path / "jobs"
    step = f'echo "S $(date +%s.%N)" >> {joblog}; sleep 0.3; echo "E $(date +%s.%N)" >> {joblog}'
    commands = [(f"s{i}", ["sh", "-c", step]) for i in range(5)]
    tuxmake.run_logged(commands, 2, tmp_path, {"PATH": "/usr/bin:/bin"})
    assert len(joblog.read_text().splitlines()) == 10
    assert max_running(joblog) == 2
    assert sorted(p.name for p in tmp_path.glob("*.log")) == [f"s{i}.log" for i in range(5)]


def test_a_failing_command_stops_with_its_log(tmp_path):
    commands = [("bad", ["sh", "-c", "echo broken; exit 3"])]
    with pytest.raises(SystemExit) as exc:
        tuxmake.run_logged(commands, 1, tmp_path, {"PATH": "/usr/bin:/bin"})
    assert "exited 3" in str(exc.value) and "broken" in str(exc.value)


def test_make_lines_see_through_the_jobserver_wrapper(tmp_path):
    ours = tmp_path / "ours.log"
    ours.write_text(
        "$ sh -c 'exec 3<>\"$1\"' sh /tmp/j/fifo make --silent O=b bzImage\n"
        "$ make --silent O=b tinyconfig\n$ cp a b\n"
    )
    assert tuxmake.make_lines(ours, "$ ") == [
        "make --silent O=b bzImage",
        "make --silent O=b tinyconfig",
    ]
    theirs = tmp_path / "theirs.log"
    theirs.write_text("make --jobs=2 O=b\nwarning: cannot make it\n")
    assert tuxmake.make_lines(theirs, "") == ["make --jobs=2 O=b"]
