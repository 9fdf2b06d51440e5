"""`kbuild` stopped by SIGTERM (a CI job cancelled) or Ctrl-C while make
runs: no traceback, the running target INTERRUPTED, the targets after it
SKIP, metadata.json complete, the temporary build dir removed, exit 143 or
130 (issue 14)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support import ctrl_c_reaches_child

SLEEP = f"53.{os.getpid()}"  # a duration no other test's make sleeps


def sleepers() -> list[str]:
    out = subprocess.run(["pgrep", "-af", f"sleep {SLEEP}"], capture_output=True, text=True)
    return [ln for ln in out.stdout.splitlines() if "pgrep" not in ln]


@pytest.mark.parametrize(
    ("signum", "code", "reason"),
    [(signal.SIGTERM, 143, "terminated by SIGTERM"), (signal.SIGINT, 130, "interrupted")],
    ids=["sigterm", "ctrl-c"],
)
def test_kbuild_stopped_leaves_a_complete_record(fakelinux, tmp_path, signum, code, reason):
    out, tmp = tmp_path / "out", tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from pytest_kbuild.cli import kbuild_main; exit(kbuild_main())"]
        + [f"--directory={fakelinux}", "--target-arch=x86_64", f"--output-dir={out}"]
        + ["config", "kernel", "headers"],
        cwd=tmp_path,
        env={**os.environ, "FAKELINUX_SLEEP": SLEEP, "TMPDIR": str(tmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # signalled as a group, as a CI runner or a terminal does
        preexec_fn=ctrl_c_reaches_child,
    )
    try:
        deadline = time.monotonic() + 60
        while not sleepers() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sleepers(), "make did not reach the kernel target"
        os.killpg(proc.pid, signum)
        text = proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, text
    assert "Traceback" not in text and not sleepers(), text
    assert f"E: {reason}" in text and "the running target is marked INTERRUPTED" in text
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "INTERRUPTED" and meta["finished"], meta
    assert meta["targets"]["config"]["status"] == "PASS"
    assert meta["targets"]["kernel"]["status"] == "INTERRUPTED"
    assert meta["targets"]["headers"]["status"] == "SKIP"
    assert meta["targets"]["headers"]["reason"].startswith("not run: the build was ")
    assert list(tmp.iterdir()) == [], "the temporary build dir is removed"
