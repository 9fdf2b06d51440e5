"""One run per results dir: two runs writing into the same dir would mix
their build.log, metadata.json, artifacts and results.json. The run holds an
flock on ``<results>/.kbuild-run.lock`` (which says who holds it) from start
to end; a second run stops at once naming the first. Likewise one build per
build dir (``<build dir>/.kbuild-build.lock``, held while the build runs):
a build dir given again is used again (an incremental build), so two runs
must never share it at once. The kernel drops the lock of a killed process,
so a SIGKILL never leaves a dir locked. No pytest import."""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import KbuildUserError

LOCK = ".kbuild-run.lock"
BUILD_LOCK = ".kbuild-build.lock"  # in a build dir, held while a build uses it


class ResultsDirInUse(KbuildUserError):
    """Another run holds the results dir's lock."""

    def __init__(self, where: str, path: Path, holder: str) -> None:
        super().__init__(
            f"{where}: results dir {str(path)!r} is in use by another run ({holder}); two runs "
            "in one results dir would mix their logs, metadata.json and results.json: give "
            "this run a results dir of its own, or run it after that one"
        )
        self.path = path


class BuildDirInUse(KbuildUserError):
    """Another process builds in the build dir (its lock is held)."""

    def __init__(self, build_id: str, path: Path, holder: str) -> None:
        super().__init__(
            f"build {build_id}: build dir {str(path)!r} is in use by another build ({holder}); "
            "two builds in one build dir would overwrite each other's objects: give this run "
            "a build dir of its own (--kbuild-build-dir, kbuild -b), or run it after that one"
        )
        self.build_id = build_id
        self.path = path


@dataclass
class RunLock:
    """The held lock of one run; ``release`` gives it back and removes the file."""

    path: Path
    fd: int

    def release(self) -> None:
        if self.fd < 0:
            return
        # Unlinked while held: a run that opened the old file checks, after
        # taking the lock, that the name still points at what it locked.
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.fd)
        self.fd = -1


def acquire(results: Path, where: str) -> RunLock:
    """Make *results* (a directory) and lock it for this run; *where* names
    the option the dir came from. A dir that cannot be made or written, or
    that another run holds, is a KbuildUserError saying so."""
    try:
        results.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise KbuildUserError(
            f"{where}: {str(results)!r} is a file; the results dir must be a directory"
        ) from None
    except OSError as err:
        raise _unusable(where, results, err) from None
    return _take(
        results / LOCK,
        lambda holder: ResultsDirInUse(where, results, holder),
        lambda err: _unusable(where, results, err),
    )


def acquire_build_dir(build_dir: Path, build_id: str) -> RunLock:
    """Lock the build dir *build_dir* (which exists) for the build *build_id*
    while it builds: two processes building into one dir (two runs given the
    same --kbuild-build-dir or kbuild -b) would overwrite each other's
    objects. A dir another process holds is a BuildDirInUse naming it."""
    return _take(
        build_dir / BUILD_LOCK,
        lambda holder: BuildDirInUse(build_id, build_dir, holder),
        lambda err: KbuildUserError(
            f"build {build_id}: cannot lock the build dir {str(build_dir)!r}: {err.strerror or err}"
        ),
    )


def _take(
    path: Path,
    busy: Callable[[str], KbuildUserError],
    unusable: Callable[[OSError], KbuildUserError],
) -> RunLock:
    """flock *path* (made if missing) without waiting; *busy* gets the
    holder's description, *unusable* an error opening the file."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as err:
            raise unusable(err) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise busy(_holder(path)) from None
        try:
            same = os.fstat(fd).st_ino == path.stat().st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder released and removed it meanwhile: take the new one
    _describe(fd)
    return RunLock(path, fd)


def _unusable(where: str, results: Path, err: OSError) -> KbuildUserError:
    return KbuildUserError(
        f"{where}: cannot use {str(results)!r} as the results dir: {err.strerror or err}"
    )


def _describe(fd: int) -> None:
    """Who holds the lock, for the message of a second run (best effort:
    a full disk leaves the file empty)."""
    me = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv)[:300],
    }
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)


def _holder(path: Path) -> str:
    try:
        who = json.loads(path.read_text())
        return f"pid {who['pid']} on {who['host']}, started {who['started']}: {who['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "it did not say who it is"
