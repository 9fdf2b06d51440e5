"""SIGTERM, as a CI system stops a job, interrupts like Ctrl-C: make stops,
the running target is INTERRUPTED in metadata.json and results.json, the
JUnit XML of what ran is written, temporary dirs go, and no traceback is
printed; a worker killed with SIGKILL takes its make with it and its build
is reported once, as an ERROR; what a SIGKILL of the whole run leaves in
the temporary root, the next run removes (part of issue 16)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_kbuild.run import runlock
from tests.support import builds_by_id, ctrl_c_reaches_child

# A duration no other process sleeps (not even a killed earlier run's
# orphan), to find a left-over make of this test.
SLEEP = f"47.{os.getpid()}"
TWO_BUILDS = "arch: [x86_64, arm64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n"
BUILDS = ("x86_64-gcc-defconfig", "arm64-gcc-defconfig")


def sleepers() -> list[str]:
    out = subprocess.run(["pgrep", "-af", f"sleep {SLEEP}"], capture_output=True, text=True)
    return [ln for ln in out.stdout.splitlines() if "pgrep" not in ln]


def wait_for_kernel(results: Path, running: int, builds=BUILDS) -> list[str]:
    """The builds sleeping in their kernel target, once *running* of them are."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        logs = {b: results / "m" / b / "build.log" for b in builds}
        inside = [b for b, p in logs.items() if p.is_file() and "# target kernel" in p.read_text()]
        if len(inside) == running and len(sleepers()) >= running:
            return inside
        time.sleep(0.1)
    pytest.fail("the builds did not reach their kernel target")


def start(argv, cwd, **env):
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, "FAKELINUX_SLEEP": SLEEP, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group, signalled as a CI runner does
        preexec_fn=ctrl_c_reaches_child,
    )


def stop(proc, group: bool, sig=signal.SIGTERM) -> str:
    try:
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        return proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.parametrize(
    "xdist, group, sig",
    [
        ([], True, signal.SIGTERM),
        (["-n", "2"], True, signal.SIGTERM),
        (["-n", "2"], False, signal.SIGTERM),
        (["-n", "2"], True, signal.SIGINT),
    ],
    ids=["serial", "xdist-group", "xdist-controller-only", "xdist-ctrl-c"],
)
def test_sigterm_keeps_metadata_results_and_junit(pytester, fakelinux, xdist, group, sig):
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{TWO_BUILDS}")
    proc = start(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--kbuild-matrix=m.yaml"]
        + ["--junitxml=j.xml", "--kbuild-progress=0", *xdist],
        pytester.path,
    )
    results = pytester.path / "kbuild-results"
    builds = wait_for_kernel(results, 2 if xdist else 1)
    took = time.monotonic()
    out = stop(proc, group, sig)
    took = time.monotonic() - took
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert took < 30, out
    assert "Traceback" not in out, out
    terminated = sig == signal.SIGTERM
    assert ("terminated by SIGTERM" in out) == terminated, out
    assert not sleepers()  # make and its children were stopped
    summary = json.loads((results / "results.json").read_text())
    # Bug: results.json counted the interrupted builds as passed.
    assert summary["totals"] == {
        "builds": len(builds),
        "passed": len(builds),
        "interrupted": len(builds),
    }
    for build in builds:
        meta = json.loads((results / "m" / build / "metadata.json").read_text())
        assert meta["status"] == "INTERRUPTED", meta
        kernel = meta["targets"]["kernel"]
        assert kernel["status"] == "INTERRUPTED"
        # the controller passes a SIGTERM on to its workers
        assert kernel["reason"] == (
            "terminated by SIGTERM" if terminated else "interrupted (Ctrl-C)"
        )
        assert meta["targets"]["config"]["status"] == "PASS"
        assert builds_by_id(summary)[build]["targets"]["kernel"]["status"] == "INTERRUPTED"
        assert not Path(meta["build_dir"]).exists()  # the temporary build dir is gone
    assert not (results / runlock.LOCK).exists()
    fifo = re.search(r"kbuild jobserver: .*; (/\S+)/fifo\)", out)
    assert bool(fifo) == bool(xdist), out
    if fifo:
        assert not Path(fifo.group(1)).exists()  # the jobserver's FIFO dir is gone
    cases = {c.get("name") for c in ET.parse(pytester.path / "j.xml").getroot().iter("testcase")}
    assert "config" in cases, out


def test_a_killed_worker_takes_its_make_along_and_its_build_errors_once(pytester, fakelinux):
    (pytester.path / "m.yaml").write_text(
        f"tree: {fakelinux}\narch: [x86_64]\ntoolchain: [gcc]\n"
        "targets: [config, kernel, debugkernel]\n"
    )
    proc = start(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--kbuild-matrix=m.yaml"]
        + ["--junitxml=j.xml", "--kbuild-progress=1", "-n", "2"],
        pytester.path,
    )
    results = pytester.path / "kbuild-results"
    try:
        wait_for_kernel(results, 1, builds=("x86_64-gcc-defconfig",))
        deadline = time.monotonic() + 30
        while not list((results / ".progress").glob("gw*.json")):  # it said what it does
            assert time.monotonic() < deadline
            time.sleep(0.1)
        make = int(subprocess.check_output(["ps", "-o", "ppid=", "-p", sleepers()[0].split()[0]]))
        worker = int(subprocess.check_output(["ps", "-o", "ppid=", "-p", str(make)]))
        build_dir = json.loads((results / "m/x86_64-gcc-defconfig/metadata.json").read_text())[
            "build_dir"
        ]
        os.kill(worker, signal.SIGKILL)
        out = proc.communicate(timeout=120)[0].decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert not sleepers(), out  # its make went with it
    assert not Path(build_dir).exists(), out
    assert not (results / ".progress").exists()  # the dead worker's progress file too
    assert not (results / runlock.LOCK).exists()
    # Bug: 7 results for 6 items, the crashed target run again on a new worker.
    cases = list(ET.parse(pytester.path / "j.xml").getroot().iter("testcase"))
    outcome = {c.get("name"): [ch.tag for ch in c if ch.tag != "system-out"] for c in cases}
    assert outcome == {"config": [], "kernel": ["error"], "debugkernel": ["skipped"]}, out
    error = next(c for c in cases if c.get("name") == "kernel").find("error")
    assert "xdist worker gw" in error.get("message") and "crashed while building kernel" in (
        error.get("message")
    )
    assert "1 passed, 1 skipped, 1 error" in out, out
    summary = json.loads((results / "results.json").read_text())
    assert summary["totals"] == {"builds": 1, "passed": 1, "error": 1, "skipped": 1}
    meta = json.loads((results / "m/x86_64-gcc-defconfig/metadata.json").read_text())
    assert meta["status"] == "ERROR" and "crashed while building kernel" in meta["error"]
    assert meta["targets"]["kernel"]["infra"] == "worker-crashed"
    assert meta["targets"]["debugkernel"]["status"] == "SKIP"


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


def leftovers(tmp: Path) -> dict[str, Path]:
    """pytest-kbuild's dirs in *tmp*, by name (a killed gcc leaves its own
    files there too)."""
    return {p.name: p for p in tmp.glob("kbuild-*")}


def test_a_sigkilled_runs_temporary_dirs_are_removed_by_the_next_run(pytester, fakelinux):
    tmp = pytester.path / "tmp"  # a temporary root of its own: nothing else is swept
    tmp.mkdir()
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{TWO_BUILDS}")
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--kbuild-matrix=m.yaml"]
    argv += ["--kbuild-progress=0", "-n", "2"]
    proc = start(argv, pytester.path, TMPDIR=str(tmp))
    results = pytester.path / "kbuild-results"
    wait_for_kernel(results, 2)
    # What a CI runner does once the grace period after SIGTERM is over.
    out = stop(proc, group=True, sig=signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    left = leftovers(tmp)
    (jobserver,) = [p for n, p in left.items() if n.startswith("kbuild-jobserver-")]
    builds = sorted(p for p in left.values() if p != jobserver)
    assert len(builds) == 2 and (jobserver / "fifo").exists(), left
    metas = [json.loads((results / "m" / b / "metadata.json").read_text()) for b in BUILDS]
    assert {m["status"] for m in metas} == {"running"}  # no one was left to say otherwise
    assert sorted(Path(m["build_dir"]).parent for m in metas) == builds
    workers = {b: json.loads((b / ".kbuild-owner").read_text())["pid"] for b in builds}

    again = subprocess.run(
        argv, cwd=pytester.path, env={**os.environ, "TMPDIR": str(tmp)}, capture_output=True
    )
    out = again.stdout.decode()
    assert again.returncode == 0, out
    said = sorted(ln for ln in out.splitlines() if "removed stale" in ln)
    assert said == sorted(
        [f"kbuild: removed stale build dir {b} (owner pid {workers[b]} died)" for b in builds]
        + [f"kbuild: removed stale jobserver dir {jobserver} (owner pid {proc.pid} died)"]
    ), out
    assert leftovers(tmp) == {}  # and this run removed its own


def test_a_sigkilled_kbuilds_build_dir_is_removed_by_the_next_kbuild(fakelinux, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    argv = [sys.executable, "-c", "from pytest_kbuild.cli import kbuild_main; exit(kbuild_main())"]
    argv += [f"--directory={fakelinux}", "--target-arch=x86_64", f"--output-dir={tmp_path}/out"]
    proc = start([*argv, "config", "kernel"], tmp_path, TMPDIR=str(tmp))
    deadline = time.monotonic() + 60
    while not sleepers() and time.monotonic() < deadline:
        time.sleep(0.1)
    stop(proc, group=True, sig=signal.SIGKILL)
    (build,) = leftovers(tmp).values()
    assert (build / "build").is_dir()
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["status"] == "running"

    again = subprocess.run(
        [*argv, "config"],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"I: removed stale build dir {build} (owner pid {proc.pid} died)\n" in again.stdout
    assert leftovers(tmp) == {}
