"""A build's own directories: the check that emptying the build directory
cannot destroy the tree or the results, making it, and naming what failed."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..errors import KbuildInfraError, KbuildUserError
from ..results import METADATA, REPRODUCER
from ..run import runlock, tempdirs
from ..run.runlock import RunLock

TEMP_PREFIX = "kbuild-"  # of the directory holding a temporary build dir
TEMP_NAME = "build"


def check_build_dir(build_dir: Path | None, tree: Path, output_dir: Path) -> None:
    """A given build directory is emptied before the build: never let that
    be the tree, the results or anything holding them."""
    if build_dir is None:
        return
    for what, path in (("kernel tree", tree), ("output directory", output_dir)):
        if path == build_dir or build_dir in path.parents:
            raise KbuildUserError(
                f"build directory {str(build_dir)!r} would be emptied, but it holds "
                f"the {what} {str(path)!r}; choose a directory of its own"
            )


def lock_build_dir(build_dir: Path, build_id: str) -> RunLock:
    """Make the given *build_dir* and lock it for the build *build_id*: a dir
    another process builds in is a BuildDirInUse (runlock.py)."""
    try:
        build_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise dir_error("build dir", build_dir, err) from None
    return runlock.acquire_build_dir(build_dir, build_id)


def make_build_dir(build_dir: Path | None, build_id: str, keep: bool = False) -> Path:
    """An empty build directory: a new temporary one, or *build_dir* emptied
    (unless *keep*: then its objects are used again). The lock a build holds
    on it (lock_build_dir) stays."""
    try:
        if build_dir is None:
            # One level down in a directory of its own: Kbuild's package
            # targets (bindeb-pkg) write their files beside the build dir.
            # Owned (tempdirs.py): a run killed with SIGKILL leaves it to the next.
            made = tempdirs.make("build", f"{TEMP_PREFIX}{build_id}-") / TEMP_NAME
            made.mkdir()
            return made
        build_dir.mkdir(parents=True, exist_ok=True)
        if not keep:
            for child in build_dir.iterdir():
                if child.name == runlock.BUILD_LOCK:
                    continue
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        return build_dir
    except OSError as err:
        raise dir_error("build dir", build_dir or Path(tempfile.gettempdir()), err) from None


def clear_earlier_results(output_dir: Path) -> list[str]:
    """Remove the artifacts an earlier build's metadata.json in *output_dir*
    lists (and its reproducer.sh), so that a stale image never lies next to
    a new record; only files that record names go. Returns their names."""
    try:
        earlier = json.loads((output_dir / METADATA).read_text())
        names = [str(n) for n in earlier.get("artifacts", {})] + [REPRODUCER]
    except (OSError, ValueError, AttributeError):
        return []
    removed = []
    for name in names:
        path = output_dir / name
        if "/" in name or not path.is_file():
            continue
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(name)
    return removed


def is_temporary(build_dir: Path) -> bool:
    """True for a build dir that make_build_dir made (not a user's -b DIR)."""
    parent = build_dir.parent
    return (
        build_dir.name == TEMP_NAME
        and parent.parent == Path(tempfile.gettempdir())
        and parent.name.startswith(TEMP_PREFIX)
    )


def remove_temporary(build_dir: Path) -> None:
    """Remove a build dir that make_build_dir made, with its own parent."""
    tempdirs.remove(build_dir.parent)


def keep_temporary(build_dir: Path) -> None:
    """Keep a build dir that make_build_dir made (--kbuild-keep-build-dir):
    no later run sweeps it as a dead run's left-over."""
    tempdirs.disown(build_dir.parent)


def dir_error(what: str, path: Path, err: OSError) -> KbuildInfraError:
    """A directory the build needs cannot be made or emptied (a full disk, no
    permission): name it, and the path the system complained about."""
    where = f" ({err.filename})" if err.filename and str(err.filename) != str(path) else ""
    return KbuildInfraError(f"cannot prepare the {what} {path}{where}: {err.strerror or err}")


def free_space(dirs: Mapping[str, Path | None]) -> str:
    """How much is free where each of *dirs* lives ("build dir /b: 3.1 MB
    free"), for the message of a full disk; one entry per file system."""
    seen: dict[int, str] = {}
    for what, path in dirs.items():
        if path is None:
            continue
        try:
            dev = path.stat().st_dev
            free = shutil.disk_usage(path).free
        except OSError:
            continue
        if dev not in seen:
            seen[dev] = f"{what} {path}: {size(free)} free"
    return ", ".join(seen.values())


def size(n: int) -> str:
    """*n* bytes as people read it (3.1 MB)."""
    if n < 1024:
        return f"{n} bytes"
    value, units = n / 1024, ["KB", "MB", "GB", "TB"]
    while value >= 1024 and len(units) > 1:
        value, units = value / 1024, units[1:]
    return f"{value:.1f} {units[0]}"


def used_bytes(root: Path) -> int:
    """Bytes the files under *root* take on disk."""
    total = 0
    for path in root.rglob("*"):
        try:
            st = path.lstat()
        except OSError:
            continue
        total += st.st_blocks * 512
    return total


class SpaceReserve:
    """Room held in a build's output dir (a preallocated hidden file) so that
    its last metadata.json fits on a disk that filled up meanwhile: a full
    disk never leaves the record at "running". Best effort: without the room
    to take, nothing is held."""

    NAME = ".kbuild-space-reserve"
    BYTES = 256 * 1024  # far above a metadata.json with hundreds of diagnostics

    def __init__(self, folder: Path) -> None:
        self.path = folder / self.NAME
        self.held = False

    def take(self) -> None:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                os.posix_fallocate(fd, 0, self.BYTES)
            finally:
                os.close(fd)
            self.held = True
        except OSError:
            self.give_back()

    def give_back(self) -> bool:
        """Free the room; whether any was held."""
        held, self.held = self.held, False
        with contextlib.suppress(OSError):
            self.path.unlink()
        return held
