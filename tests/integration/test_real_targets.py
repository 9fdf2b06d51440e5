"""The targets beyond the image on Debian's real linux-source-6.1 tree:
kselftest (the `size` test dir only), cpupower and a make:<goal>, in one
x86_64 gcc tinyconfig build. perf, the packages, dtbs_check and htmldocs
cost minutes each: README's "Targets" section gives their figures,
measured outside CI."""

from __future__ import annotations

import tarfile

import pytest

from pytest_kbuild import Build, Status
from tests.support import require_tools

pytestmark = pytest.mark.realkernel


def members(path):
    with tarfile.open(path) as t:
        return {m.name for m in t.getmembers()}


def test_kselftest_cpupower_and_a_make_goal(linux_tree, tmp_path):
    require_tools("gcc", "rsync", "msgfmt", "pkg-config")
    out = tmp_path / "out"
    result = Build(
        linux_tree,
        target_arch="x86_64",
        toolchain="gcc",
        kconfig="tinyconfig",
        targets=["kselftest", "cpupower", "make:kernel/fork.o"],
        make_variables={"TARGETS": "size"},  # kselftest's own subset selector
        output_dir=out,
        jobs=2,
    ).run()
    statuses = {n: (r.status, r.reason) for n, r in result.targets.items()}
    assert statuses == {
        "config": (Status.PASS, ""),
        "kselftest": (Status.PASS, ""),
        "cpupower": (Status.PASS, ""),
        "make:kernel/fork.o": (Status.PASS, ""),
    }
    assert {"./run_kselftest.sh", "./size/get_size"} <= members(out / "kselftest.tar.xz")
    assert "./usr/bin/cpupower" in members(out / "cpupower.tar.xz")
    log = (out / "build.log").read_text()
    assert "kernel/fork.o\n" in log
