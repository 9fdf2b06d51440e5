"""benchmarks/startup.py, one round (the figure takes 15 rounds on a quiet machine)."""

from __future__ import annotations

import re

import pytest

from benchmarks import startup


def test_only_the_plugin_side_loads_the_plugin():
    assert "no:kbuild" not in startup.side_args("plugin")
    assert startup.side_args("no plugin")[-2:] == ["-p", "no:kbuild"]
    assert startup.side_args("no plugin again") == startup.side_args("no plugin")


def test_a_matrix_in_the_environment_is_not_inherited(monkeypatch):
    monkeypatch.setenv("PYTEST_KBUILD_MATRIX", "smoke.yaml")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")
    env = startup.clean_environ()
    assert "PYTEST_KBUILD_MATRIX" not in env and "PYTEST_ADDOPTS" not in env


def test_one_round(capsys):
    startup.main(["--runs", "1"])
    out = capsys.readouterr().out
    assert re.search(r"^machine: \d+ cores; This is pytest version [\d.]+\S*; ", out, re.M), out
    assert re.search(
        r"^run 1 \(plugin then no plugin then no plugin again\): plugin [\d.]+ s \([\d.]+ CPU s\)",
        out,
        re.M,
    )
    assert re.search(
        r"^median plugin/no plugin over 1 runs: wall [\d.]+, CPU [\d.]+ \(goal <= 1\.05\)$",
        out,
        re.M,
    )
    assert re.search(r"^median no plugin again/no plugin over 1 runs: wall [\d.]+, ", out, re.M)


def test_refuses_to_compare_when_the_plugin_is_not_loaded(monkeypatch):
    # Both sides would time the same run and the ratio would say nothing.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    with pytest.raises(SystemExit, match="pytest-kbuild is not loaded"):
        startup.main(["--runs", "1"])
