"""benchmarks/overhead.py, tried on fakelinux (the real figure takes a real
tree and about half an hour)."""

from __future__ import annotations

import re

from benchmarks import overhead


def test_one_round_on_fakelinux(capsys, fakelinux, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    overhead.main(["--tree", str(fakelinux), "--runs", "1"])
    out = capsys.readouterr().out
    assert "raw commands replayed: 2" in out  # make tinyconfig, make bzImage
    run = re.search(r"^run 1 \(plugin then raw then raw again\): .*$", out, re.M)
    assert run, out
    assert re.search(r"stolen s: plugin [\d.]+, raw [\d.]+, raw again [\d.]+", run[0])
    outside = float(re.search(r"plugin outside make ([\d.]+) s", run[0])[1])
    assert outside > 0
    assert re.search(r"^median plugin time outside make over 1 runs: [\d.]+ s; ", out, re.M)
    assert re.search(r"^median raw again/raw over 1 runs on \d+ cores: wall [\d.]+", out, re.M)


def test_the_plugin_side_under_a_jobserver(capsys, fakelinux, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    overhead.main(["--tree", str(fakelinux), "--runs", "1", "--jobs", "2", "--jobserver"])
    out = capsys.readouterr().out
    assert out.startswith("machine: ") and "plugin a 2-slot jobserver, raw make -j2;" in out
    assert re.search(r"^median plugin/raw over 1 runs on \d+ cores: wall [\d.]+", out, re.M)
