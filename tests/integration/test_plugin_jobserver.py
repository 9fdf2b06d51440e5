"""The shared jobserver through the whole plugin, on fakelinux: with 2 xdist
workers and 2 slots, no more than 2 compiles run at once across both builds,
where make -j2 per build runs up to 4; the FIFO goes away at the end."""

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

from benchmarks.measure import max_running
from tests.support import builds_by_id, ctrl_c_reaches_child

TWO_BUILDS = "arch: [x86_64, arm64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n"
BUILDS = ("x86_64-gcc-defconfig", "arm64-gcc-defconfig")


def write_matrix(pytester, tree, body):
    (pytester.path / "m.yaml").write_text(f"tree: {tree}\n{body}")


def metadata(pytester, build, results="kbuild-results"):
    return json.loads((pytester.path / results / "m" / build / "metadata.json").read_text())


@pytest.fixture
def joblog(pytester, monkeypatch):
    log = pytester.path / "jobs.log"
    monkeypatch.setenv("FAKELINUX_JOBLOG", str(log))
    monkeypatch.setenv("FAKELINUX_JOB_SLEEP", "0.5")
    return log


def test_two_workers_share_two_slots(pytester, fakelinux, joblog):
    write_matrix(pytester, fakelinux, TWO_BUILDS)
    # Without a jobserver: make -j2 in each of the two builds.
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "-n", "2", "--kbuild-jobserver=off", "--kbuild-jobs=2"
    )
    result.assert_outcomes(passed=4)
    unshared = max_running(joblog)
    assert unshared > 2, "the builds did not overlap; the test shows nothing"
    joblog.write_text("")
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "-n", "2", "--kbuild-jobserver=2", "--kbuild-results=shared"
    )
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["kbuild jobserver: 2 slots shared by all builds (2; *)"])
    assert max_running(joblog) == 2  # the budget, used and never exceeded
    fifos = set()
    for build in BUILDS:
        meta = metadata(pytester, build, "shared")
        assert meta["jobserver"]["mode"] == "2" and meta["jobserver"]["slots"] == 2
        assert meta["jobs"] is None
        fifos.add(meta["jobserver"]["fifo"])
        log = (pytester.path / "shared" / "m" / build / "build.log").read_text()
        makes = [ln for ln in log.splitlines() if ln.startswith("$ ") and " make " in ln]
        assert makes and all(
            ln.startswith("$ sh -c ") and "--jobserver-auth=3,3" in ln and "--jobs=" not in ln
            for ln in makes
        )
    (fifo,) = fifos  # one FIFO for the run, gone with its directory
    assert not Path(fifo).parent.exists()


def test_auto_is_on_with_several_workers_only(pytester, fakelinux):
    write_matrix(pytester, fakelinux, TWO_BUILDS)
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-n", "2").assert_outcomes(passed=4)
    meta = metadata(pytester, BUILDS[0])
    assert meta["jobserver"]["mode"] == "auto"
    assert meta["jobserver"]["slots"] == (os.cpu_count() or 1)
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml").assert_outcomes(passed=4)
    meta = metadata(pytester, BUILDS[0])
    assert meta["jobserver"] == {"mode": "auto", "slots": None, "fifo": None}
    assert isinstance(meta["jobs"], int)
    log = (pytester.path / "kbuild-results/m" / BUILDS[0] / "build.log").read_text()
    assert "$ make --silent --keep-going --jobs=" in log


def test_serial_run_with_jobserver_on(pytester, fakelinux):
    write_matrix(pytester, fakelinux, TWO_BUILDS)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-jobserver=on")
    result.assert_outcomes(passed=4)
    meta = metadata(pytester, BUILDS[1])
    assert meta["jobserver"]["slots"] == (os.cpu_count() or 1)
    assert not Path(meta["jobserver"]["fifo"]).exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--kbuild-jobserver=3", "--kbuild-jobs=2"],
            "*--kbuild-jobserver=3 and --kbuild-jobs=2 both set: the jobserver replaces*",
        ),
        (["--kbuild-jobserver=many"], "*--kbuild-jobserver: 'many' is not a jobserver mode*"),
    ],
)
def test_bad_jobserver_settings_are_usage_errors(pytester, fakelinux, args, message):
    write_matrix(pytester, fakelinux, TWO_BUILDS)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", *args)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


def test_fifo_is_removed_on_ctrl_c(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("FAKELINUX_SLEEP", "60")
    write_matrix(pytester, fakelinux, TWO_BUILDS)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--kbuild-matrix=m.yaml"]
        + ["-n", "2", "--kbuild-jobserver=2"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=ctrl_c_reaches_child,
    )
    try:
        # Wait until both builds are in their kernel target (sleeping in make):
        # config recorded in metadata.json and "# target kernel" in build.log.
        logs = [pytester.path / "kbuild-results" / "m" / b / "build.log" for b in BUILDS]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                metas = [metadata(pytester, b) for b in BUILDS]
                started = all("# target kernel" in log.read_text() for log in logs)
            except (OSError, ValueError):
                metas, started = [], False
            if started and all("config" in m["targets"] for m in metas):
                break
            time.sleep(0.1)
        else:
            pytest.fail("the builds did not start")
        fifo = Path(metas[0]["jobserver"]["fifo"])
        assert fifo.exists()
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the group
        out = proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in out or "Interrupted" in out
    assert not fifo.parent.exists()
    for build in BUILDS:
        assert metadata(pytester, build)["targets"]["kernel"]["status"] == "INTERRUPTED"


def test_the_wait_for_a_slot_is_queued_apart_from_the_running_time(
    pytester, fakelinux, monkeypatch
):
    """One slot for two builds on two workers: one build's commands wait while
    the other's 4-second kernel holds it. That wait is each target's
    ``queued`` (results.json, metadata.json, the progress line), and neither
    its duration nor its JUnit time counts it."""
    write_matrix(pytester, fakelinux, TWO_BUILDS)
    monkeypatch.setenv("FAKELINUX_SLEEP", "4")
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml",
        "-n",
        "2",
        "--kbuild-jobserver=1",
        "--kbuild-progress=1",
        "--junitxml=j.xml",
    )
    result.assert_outcomes(passed=4)
    summary = json.loads((pytester.path / "kbuild-results" / "results.json").read_text())
    assert summary["schema"] == 4
    targets = {
        (b, t): v for b, build in builds_by_id(summary).items() for t, v in build["targets"].items()
    }
    assert all(isinstance(v["queued"], float | int) for v in targets.values())
    (build, target), waited = max(targets.items(), key=lambda kv: kv[1]["queued"])
    assert waited["queued"] >= 3, targets
    meta = metadata(pytester, build)["targets"][target]
    assert (meta["queued"], meta["duration"]) == (waited["queued"], waited["duration"])
    junit = ET.parse(pytester.path / "j.xml").getroot()
    case = next(
        c
        for c in junit.iter("testcase")
        if c.get("name") == target and build in (c.get("classname") or "")
    )
    assert float(case.get("time")) < waited["duration"] + waited["queued"] / 2
    waiting = rf"{build} {target} \d+s \(\d+s waiting\): waiting for a jobserver slot"
    assert re.search(waiting, result.stdout.str()), result.stdout.str()[-3000:]
