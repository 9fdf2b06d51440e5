"""One run per results dir (runlock.py)."""

from __future__ import annotations

import json
import os

import pytest

from pytest_kbuild.errors import KbuildUserError
from pytest_kbuild.run import runlock


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


def test_a_second_build_in_one_build_dir_stops_naming_the_first(tmp_path):
    first = runlock.acquire_build_dir(tmp_path, "arm64-gcc-defconfig")
    with pytest.raises(runlock.BuildDirInUse) as exc:
        runlock.acquire_build_dir(tmp_path, "arm64-gcc-defconfig")
    msg = str(exc.value)
    assert msg.startswith(
        f"build arm64-gcc-defconfig: build dir {str(tmp_path)!r} is in use by another build "
        f"(pid {os.getpid()} on "
    )
    assert msg.endswith(
        "two builds in one build dir would overwrite each other's objects: give this run a "
        "build dir of its own (--kbuild-build-dir, kbuild -b), or run it after that one"
    )
    assert (exc.value.build_id, exc.value.path) == ("arm64-gcc-defconfig", tmp_path)
    first.release()
    assert not (tmp_path / runlock.BUILD_LOCK).exists()
    runlock.acquire_build_dir(tmp_path, "arm64-gcc-defconfig").release()


def test_a_build_dir_that_cannot_hold_a_lock(tmp_path):
    with pytest.raises(KbuildUserError) as exc:
        runlock.acquire_build_dir(tmp_path / "missing", "b")
    assert str(exc.value) == (
        f"build b: cannot lock the build dir {str(tmp_path / 'missing')!r}: "
        "No such file or directory"
    )
