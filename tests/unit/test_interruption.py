"""results.json of an interrupted run (interruption.py)."""

from __future__ import annotations

import json

from pytest_kbuild.report import interruption
from pytest_kbuild.results import METADATA
from pytest_kbuild.spec import BuildSpec


def spec(arch):
    return BuildSpec.make(arch, targets=["config", "kernel", "modules"])


def write(folder, **meta):
    folder.mkdir(parents=True)
    (folder / METADATA).write_text(json.dumps(meta))


def test_interrupted_targets_come_from_metadata(tmp_path):
    x86, arm = spec("x86_64"), spec("arm64")
    passed = {"status": "PASS", "reason": ""}
    write(
        tmp_path / "m" / x86.id,
        started="2026-01-01T10:00:00+00:00",
        status="INTERRUPTED",
        targets={"config": passed, "kernel": {"status": "INTERRUPTED", "reason": "Ctrl-C"}},
    )
    # Its process died before it could say so: the next target is marked.
    write(
        tmp_path / "m" / arm.id,
        started="2026-01-01T10:00:01+00:00",
        status="running",
        targets={"config": passed},
    )
    builds = {
        f"m.yaml::{x86.id}": {"targets": {"config": {"outcome": "passed", "status": "PASS"}}},
    }
    planned = [("m.yaml", x86), ("m.yaml", arm), ("m.yaml", spec("riscv"))]
    assert interruption.mark(builds, planned, tmp_path, "2026-01-01T10:00:00+00:00") == 2
    assert builds[f"m.yaml::{x86.id}"]["targets"]["kernel"] == {
        "outcome": "interrupted",
        "status": "INTERRUPTED",
        "reason": "Ctrl-C",
    }
    assert builds[f"m.yaml::{arm.id}"]["matrix"] == "m.yaml"
    assert builds[f"m.yaml::{arm.id}"]["build_id"] == arm.id
    assert builds[f"m.yaml::{arm.id}"]["targets"] == {
        "kernel": {"outcome": "interrupted", "status": "INTERRUPTED", "reason": interruption.REASON}
    }
    assert "m.yaml::riscv-gcc-defconfig" not in builds  # never started
    meta = json.loads((tmp_path / "m" / arm.id / METADATA).read_text())
    assert meta["status"] == "INTERRUPTED" and meta["finished"]
    assert meta["targets"]["kernel"]["status"] == "INTERRUPTED"


def test_an_earlier_runs_build_is_left_alone(tmp_path):
    x86 = spec("x86_64")
    write(
        tmp_path / "m" / x86.id,
        started="2025-01-01T10:00:00+00:00",
        status="running",
        targets={},
    )
    builds: dict = {}
    assert interruption.mark(builds, [("m.yaml", x86)], tmp_path, "2026-01-01T00:00:00+00:00") == 0
    assert builds == {}
