"""SIGTERM, as a CI system stops a job, interrupts like Ctrl-C: make stops,
the running target is INTERRUPTED in metadata.json, the JUnit XML of what
ran is written, and no traceback is printed (part of issue 16)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

# A duration no other process sleeps (not even a killed earlier run's
# orphan), to find a left-over make of this test.
SLEEP = f"47.{os.getpid()}"
TWO_BUILDS = "arch: [x86_64, arm64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n"
BUILDS = ("x86_64-gcc-defconfig", "arm64-gcc-defconfig")


def sleepers() -> list[str]:
    out = subprocess.run(["pgrep", "-af", f"sleep {SLEEP}"], capture_output=True, text=True)
    return [ln for ln in out.stdout.splitlines() if "pgrep" not in ln]


def wait_for_kernel(results: Path, running: int) -> list[str]:
    """The builds sleeping in their kernel target, once *running* of them are."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        logs = {b: results / "m" / b / "build.log" for b in BUILDS}
        inside = [b for b, p in logs.items() if p.is_file() and "# target kernel" in p.read_text()]
        if len(inside) == running and len(sleepers()) >= running:
            return inside
        time.sleep(0.1)
    pytest.fail("the builds did not reach their kernel target")


def start(argv, cwd):
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, "FAKELINUX_SLEEP": SLEEP},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group, signalled as a CI runner does
    )


def stop(proc, group: bool) -> str:
    try:
        if group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM)
        return proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.parametrize(
    "xdist, group",
    [([], True), (["-n", "2"], True), (["-n", "2"], False)],
    ids=["serial", "xdist-group", "xdist-controller-only"],
)
def test_sigterm_keeps_metadata_and_junit(pytester, fakelinux, xdist, group):
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{TWO_BUILDS}")
    proc = start(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--kbuild-matrix=m.yaml"]
        + ["--junitxml=j.xml", *xdist],
        pytester.path,
    )
    builds = wait_for_kernel(pytester.path / "kbuild-results", 2 if xdist else 1)
    took = time.monotonic()
    out = stop(proc, group)
    took = time.monotonic() - took
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert took < 30, out
    assert "terminated by SIGTERM" in out and "Traceback" not in out, out
    assert not sleepers()  # make and its children were stopped
    for build in builds:
        meta = json.loads(
            (pytester.path / "kbuild-results/m" / build / "metadata.json").read_text()
        )
        assert meta["status"] == "INTERRUPTED", meta
        kernel = meta["targets"]["kernel"]
        assert kernel["status"] == "INTERRUPTED"
        # SIGTERM to the controller alone: xdist stops its workers with SIGINT
        said = {"terminated by SIGTERM"} if group else {"interrupted (Ctrl-C)"}
        assert kernel["reason"] in said, kernel
        assert meta["targets"]["config"]["status"] == "PASS"
    cases = {c.get("name") for c in ET.parse(pytester.path / "j.xml").getroot().iter("testcase")}
    assert "config" in cases, out


def test_kbuild_sigterm_exits_143(fakelinux, tmp_path):
    out = tmp_path / "out"
    proc = start(
        [sys.executable, "-c", "from pytest_kbuild.cli import kbuild_main; exit(kbuild_main())"]
        + [f"--directory={fakelinux}", "--target-arch=x86_64", f"--output-dir={out}"]
        + ["config", "kernel"],
        tmp_path,
    )
    deadline = time.monotonic() + 60
    while not sleepers() and time.monotonic() < deadline:
        time.sleep(0.1)
    text = stop(proc, group=True)
    assert proc.returncode == 143, text
    assert "E: terminated by SIGTERM; the running target is marked INTERRUPTED" in text
    assert "Traceback" not in text and not sleepers()
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["targets"]["kernel"]["reason"] == "terminated by SIGTERM"
