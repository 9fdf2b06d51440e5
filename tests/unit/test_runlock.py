"""One run per results dir (runlock.py)."""

from __future__ import annotations

import json
import os

import pytest

from pytest_kbuild import runlock
from pytest_kbuild.errors import KbuildUserError


def test_a_second_run_stops_naming_the_first(tmp_path):
    first = runlock.acquire(tmp_path / "res", "--kbuild-results")
    holder = json.loads((tmp_path / "res" / runlock.LOCK).read_text())
    assert holder["pid"] == os.getpid() and holder["started"] and holder["host"]
    with pytest.raises(runlock.ResultsDirInUse) as exc:
        runlock.acquire(tmp_path / "res", "--kbuild-results")
    msg = str(exc.value)
    assert msg.startswith(f"--kbuild-results: results dir {str(tmp_path / 'res')!r} is in use")
    assert f"pid {os.getpid()} on {holder['host']}, started {holder['started']}" in msg
    assert "results dir of its own" in msg
    first.release()
    assert not (tmp_path / "res" / runlock.LOCK).exists()
    runlock.acquire(tmp_path / "res", "--kbuild-results").release()
    first.release()  # twice is harmless


def test_a_lock_file_left_by_a_killed_run_is_taken(tmp_path):
    # The kernel drops a dead process's flock; only the file stays.
    (tmp_path / runlock.LOCK).write_text('{"pid": 1, "host": "h", "started": "s"}')
    runlock.acquire(tmp_path, "PYTEST_KBUILD_RESULTS").release()


def test_a_holder_that_said_nothing(tmp_path):
    first = runlock.acquire(tmp_path, "x")
    (tmp_path / runlock.LOCK).write_text("")  # a full disk left it empty
    with pytest.raises(runlock.ResultsDirInUse, match="it did not say who it is"):
        runlock.acquire(tmp_path, "x")
    first.release()


def test_a_file_or_an_unwritable_place_is_not_a_results_dir(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(KbuildUserError) as exc:
        runlock.acquire(tmp_path / "f", "--kbuild-results")
    assert str(exc.value) == (
        f"--kbuild-results: {str(tmp_path / 'f')!r} is a file; the results dir must be a directory"
    )
    with pytest.raises(KbuildUserError) as exc:
        runlock.acquire(tmp_path / "f" / "sub", "--kbuild-results")
    assert str(exc.value).endswith("as the results dir: Not a directory")
    (tmp_path / "ro").mkdir(mode=0o555)
    if os.geteuid() != 0:  # root writes anywhere; the real read-only mount is in integration
        with pytest.raises(KbuildUserError, match="Permission denied"):
            runlock.acquire(tmp_path / "ro", "--kbuild-results")
