"""Temporary dirs that outlive a killed run, and their removal by the next one.

A run removes its temporary build dirs and its jobserver's FIFO dir itself,
also on Ctrl-C and SIGTERM; SIGKILL gives it no chance. So every such dir
holds an owner file, ``.kbuild-owner`` (kind, pid, host, start time), that
its owner keeps locked with flock(2) while it lives: the kernel drops the
lock when the owner dies, however it dies. The next run (pytest-kbuild's
controller and ``kbuild``) sweeps the dirs of these kinds in the same
temporary root whose lock is free. A dir whose lock is held, that has no
owner file, that belongs to another user or whose owner file names another
host (a shared /tmp, where flock does not see the other host's locks) is
never removed. No pytest import.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

OWNER = ".kbuild-owner"
PREFIX = "kbuild-"  # every dir of KINDS is named PREFIX...
# kind -> what is in it, for the docs; a dir's kind is read from its owner file.
KINDS = {
    "build": "a build's temporary build dir (kbuild-<build id>-*/build)",
    "jobserver": "the run's jobserver FIFO (kbuild-jobserver-*/fifo)",
    "results": "a remote xdist worker's results before they go home (kbuild-results-*)",
}

# The owner files this process holds: dir -> the locked fd.
_held: dict[Path, int] = {}


@dataclass(frozen=True)
class Stale:
    """A dir left by a dead owner."""

    kind: str
    path: Path
    pid: int
    removed: bool
    error: str = ""

    def line(self) -> str:
        """What the next run says about it."""
        if self.removed:
            return f"removed stale {self.kind} dir {self.path} (owner pid {self.pid} died)"
        return (
            f"stale {self.kind} dir {self.path} (owner pid {self.pid} died) "
            f"could not be removed: {self.error}"
        )


def make(kind: str, prefix: str = PREFIX) -> Path:
    """A new temporary dir owned (and locked) by this process until remove()
    or disown(); *prefix* must start with PREFIX. Raises OSError."""
    if kind not in KINDS or not prefix.startswith(PREFIX):
        raise ValueError(f"unknown temporary dir kind {kind!r} or prefix {prefix!r}")
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        _held[path] = _own(path, kind)
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return path


def _own(path: Path, kind: str) -> int:
    """Write and lock *path*'s owner file; its fd. The file appears (by a
    rename) already locked, so a sweep never finds it free while we live."""
    part = path / f"{OWNER}.part"
    fd = os.open(part, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        me = {
            "kind": kind,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
        os.write(fd, (json.dumps(me) + "\n").encode())
        os.rename(part, path / OWNER)
    except OSError:
        os.close(fd)
        raise
    return fd


def remove(path: Path) -> None:
    """Remove *path* (a dir from make(), or one whose owner died), then give
    its lock back: the lock covers the removal."""
    shutil.rmtree(path, ignore_errors=True)
    _release(path)


def disown(path: Path) -> None:
    """Keep *path* for good (``--kbuild-keep-build-dir``): no owner file,
    so no later run sweeps it."""
    with contextlib.suppress(OSError):
        (path / OWNER).unlink()
    _release(path)


def _release(path: Path) -> None:
    fd = _held.pop(path, None)
    if fd is None:
        fd = _held.pop(path.resolve(), None) if path.is_absolute() else None
    if fd is not None:
        os.close(fd)


def sweep(root: Path | None = None) -> list[Stale]:
    """Remove the dirs of KINDS under *root* (the temporary root) whose owner
    died; what was found, in name order."""
    root = Path(tempfile.gettempdir()) if root is None else root
    try:
        names = sorted(n for n in os.listdir(root) if n.startswith(PREFIX))
    except OSError:
        return []
    host, uid = socket.gethostname(), os.getuid()
    found = []
    for name in names:
        path = root / name
        if path in _held:
            continue
        stale = _sweep_one(path, host, uid)
        if stale is not None:
            found.append(stale)
    return found


def _sweep_one(path: Path, host: str, uid: int) -> Stale | None:
    owner = path / OWNER
    try:
        # O_NOFOLLOW: never lock (nor trust) a file another user linked there.
        fd = os.open(owner, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None  # no owner file (or not a dir): not ours to judge
    try:
        st = os.fstat(fd)
        if st.st_uid != uid or path.lstat().st_uid != uid:
            return None
        try:
            who = json.loads(os.read(fd, 4096))
            kind, pid, their_host = str(who["kind"]), int(who["pid"]), str(who["host"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if kind not in KINDS or their_host != host:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # its owner lives
        try:
            if os.stat(owner).st_ino != st.st_ino:
                return None  # removed (and the name reused) meanwhile
        except OSError:
            return None  # its owner removed it just now
        try:
            shutil.rmtree(path)
        except OSError as err:
            return Stale(kind, path, pid, removed=False, error=err.strerror or str(err))
        return Stale(kind, path, pid, removed=True)
    finally:
        os.close(fd)
