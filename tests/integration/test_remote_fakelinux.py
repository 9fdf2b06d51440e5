"""Remote xdist workers (``--tx socket=``) on loopback: execnet socket servers
started here, building fakelinux, their results sent to the controller."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.support import ROOT

pytest.importorskip("xdist")


@pytest.fixture
def socketservers(tmp_path_factory):
    """Two execnet socket servers on 127.0.0.1 (free ports), each in a
    directory of its own (outside the test's) with its own TMPDIR; yields
    (specs, tmpdirs)."""
    top = tmp_path_factory.mktemp("servers")
    procs, specs, tmpdirs = [], [], []
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    try:
        for i in range(2):
            home = top / f"server{i}"
            (home / "tmp").mkdir(parents=True)
            proc = subprocess.Popen(
                [sys.executable, "-u", "-m", "execnet.script.socketserver", "127.0.0.1:0"],
                cwd=home,
                env={**env, "TMPDIR": str(home / "tmp")},
                stdout=subprocess.PIPE,
                text=True,
            )
            procs.append(proc)
            # "... Entering Accept loop ('127.0.0.1', PORT)": port 0 avoids a race for a port.
            port = re.search(r"'127\.0\.0\.1', (\d+)\)", proc.stdout.readline()).group(1)
            specs.append(f"socket=127.0.0.1:{port}")
            tmpdirs.append(home / "tmp")
        yield specs, tmpdirs
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
            proc.stdout.close()


def test_remote_workers_send_results_to_the_controllers_results_dir(
    pytester, fakelinux, socketservers
):
    specs, tmpdirs = socketservers
    # A remote worker has its own environment: failures are injected through the matrix.
    (pytester.path / "m.yaml").write_text(
        f"tree: {fakelinux}\narch: [x86_64, arm64, riscv]\ntoolchain: [gcc]\n"
        "targets: [config, kernel, modules]\n"
        "include: [{arch: x86_64, toolchain: gcc, name: broken, env: {FAIL: kernel}}]\n"
    )
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml",
        "--kbuild-results=out",
        "--junitxml=out/junit.xml",
        "-o",
        "junit_family=xunit1",  # testcases with their properties
        f"--rootdir={pytester.path}",
        *[f"--tx={s}" for s in specs],
        "--dist=load",
        "--max-worker-restart=0",
        "-v",
        timeout=600,
    )
    result.assert_outcomes(passed=11, failed=1)
    out = pytester.path / "out"
    builds = ("x86_64-gcc-defconfig", "arm64-gcc-defconfig", "riscv-gcc-defconfig")
    for build in builds:
        folder = out / "m" / build
        assert {"build.log", "metadata.json", "config", "modules.tar.xz"} <= {
            p.name for p in folder.iterdir()
        }, build
        meta = json.loads((folder / "metadata.json").read_text())
        assert meta["status"] == "PASS" and meta["targets"]["kernel"]["status"] == "PASS"
        assert "# target modules" in (folder / "build.log").read_text()
    broken = out / "m/x86_64-gcc-defconfig-broken"
    assert (
        json.loads((broken / "metadata.json").read_text())["targets"]["kernel"]["status"] == "FAIL"
    )
    assert "error:" in (broken / "build.log").read_text()
    # The failure message points at the controller's copy of the log.
    result.stdout.fnmatch_lines([f"log: {broken}/build.log"])
    # JUnit: every target, each log property in the controller's results dir.
    cases = ET.parse(out / "junit.xml").getroot().findall(".//testcase")
    assert len(cases) == 12
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.findall("properties/property")}
        assert props["log"] == str(out / "m" / props["build_id"] / "build.log")
    summary = json.loads((out / "results.json").read_text())
    assert summary["totals"] == {"builds": 4, "passed": 11, "failed": 1}
    # Both workers built, each in its own scratch dir, which they removed.
    assert set(re.findall(r"^\[(gw\d)\] .*PASSED", result.stdout.str(), re.M)) == {"gw0", "gw1"}
    for tmp in tmpdirs:
        assert not [p for p in tmp.iterdir() if p.name.startswith("kbuild-")], tmp
        assert not (tmp.parent / "out").exists() and not (tmp.parent / "kbuild-results").exists()


def test_remote_worker_with_another_rootdir_is_a_clear_error(pytester, fakelinux, socketservers):
    specs, _ = socketservers
    (pytester.path / "m.yaml").write_text(
        f"tree: {fakelinux}\narch: [x86_64]\ntoolchain: [gcc]\ntargets: [config]\n"
    )
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml",
        f"--tx={specs[0]}",
        "--dist=load",
        "--max-worker-restart=0",
        timeout=300,
    )
    assert result.ret != 0
    assert f"pass --rootdir={pytester.path}" in result.stdout.str() + result.stderr.str()
