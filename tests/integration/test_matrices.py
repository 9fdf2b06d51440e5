"""The matrix files we ship: they expand, and the fakelinux one runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support import ROOT, builds_by_id, require_tools

MATRICES = sorted((ROOT / "matrices").glob("*.yaml"))


@pytest.mark.parametrize("matrix", MATRICES, ids=[m.name for m in MATRICES])
def test_shipped_matrix_expands(matrix):
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pytest_kbuild.cli import main; raise SystemExit(main())",
            "expand",
            "--json",
            str(matrix),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    builds = [json.loads(line) for line in proc.stdout.splitlines()]
    assert builds and len({b["id"] for b in builds}) == len(builds)


def test_fakelinux_matrix_runs_every_target(tmp_path):
    require_tools("gcc", "aarch64-linux-gnu-gcc", "arm-linux-gnueabihf-gcc")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rs",
            "-n",
            "2",
            f"--kbuild-matrix={ROOT / 'matrices' / 'fakelinux.yaml'}",
            f"--kbuild-results={tmp_path}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:]
    summary = builds_by_id(json.loads((tmp_path / "results.json").read_text()))
    xip = {t: v["outcome"] for t, v in summary["arm-gcc-defconfig-xip"]["targets"].items()}
    assert xip["xipkernel"] == "passed"
    assert xip["kernel"] == "skipped"
    assert "CONFIG_XIP_KERNEL=y" in summary["arm-gcc-defconfig-xip"]["targets"]["kernel"]["reason"]
    assert summary["arm-gcc-tinyconfig"]["targets"]["config"]["outcome"] == "skipped"
    arm = summary["arm-gcc-defconfig"]["targets"]
    assert arm["dtbs"]["outcome"] == "passed" and arm["modules"]["outcome"] == "passed"
