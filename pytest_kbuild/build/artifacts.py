"""Copy a target's artifacts from the build directory into the results."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..definitions.arch import Arch
from ..definitions.targets import Target
from ..errors import KbuildInfraError
from ..results import Artifact, Status, TargetResult, file_mode


def collect(
    target: Target,
    arch: Arch,
    build_dir: Path,
    output_dir: Path,
    result: TargetResult,
    compression: str = "xz",
    since: float = 0.0,
) -> None:
    """Copy each artifact of *target* into *output_dir* and list it in
    *result*; one that make did not produce fails the target. An artifact
    named with ``*`` (``{"*.deb": "../*.deb"}``) is every file its path
    matches that was written after *since* (a time.time(), less a second
    for coarse file times): bindeb-pkg
    writes beside the build directory, where earlier runs' files may lie."""
    for name, rel in target.expanded_artifacts(arch, compression).items():
        sources = _sources(build_dir, name, rel, since, fresh_only=False)
        if not sources:
            result.status = Status.FAIL
            result.reason = f"{target.name} passed make but {rel} was not produced"
            result.errors.append(result.reason)
            continue
        for src, dest_name in sources:
            _copy(src, output_dir / dest_name, result)


def keep_made(
    target: Target,
    arch: Arch,
    build_dir: Path,
    output_dir: Path,
    result: TargetResult,
    since: float,
    compression: str = "xz",
    failed: Sequence[str] = (),
) -> None:
    """Copy the artifacts a failed *target* did make (written at or after
    *since*, a time.time()): a config that fails its option check still
    leaves ``config``, the file a user needs to see why. An older file (an
    incremental build dir's earlier image) is not this run's and stays out,
    and so does what the *failed* command was writing (a tar cut short)."""
    for name, rel in target.expanded_artifacts(arch, compression).items():
        for src, dest_name in _sources(build_dir, name, rel, since, fresh_only=True):
            if str(src) not in failed:
                _copy(src, output_dir / dest_name, result)


def _sources(
    build_dir: Path, name: str, rel: str, since: float, fresh_only: bool
) -> list[tuple[Path, str]]:
    """(file, result name) pairs of one artifact: the files a ``*`` name's
    path matches, else the one file; with *fresh_only* those written since."""
    if "*" in name:
        return [(p, p.name) for p in sorted(build_dir.glob(rel)) if _newer(p, since)]
    src = build_dir / rel
    made = _newer(src, since) if fresh_only else src.is_file()
    return [(src, name)] if made else []


def _newer(path: Path, since: float) -> bool:
    try:
        return path.is_file() and path.stat().st_mtime >= since
    except OSError:
        return False


def _copy(src: Path, dest: Path, result: TargetResult) -> None:
    try:
        copy(src, dest)
    except OSError as err:
        raise KbuildInfraError(
            f"cannot copy {dest.name} to {dest}: {err.strerror or err}"
        ) from None
    result.artifacts.append(Artifact.of(dest))


def copy(src: Path, dest: Path) -> None:
    """Copy *src* to *dest* under a temporary name, then rename it: a copy cut
    short (a full disk, a killed run) never looks like a result."""
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out, src.open("rb") as f:
            shutil.copyfileobj(f, out)
        mode = file_mode()
        if os.access(src, os.X_OK):  # um's kernel is a program: `linux` stays runnable
            mode |= (mode & 0o444) >> 2
        os.chmod(tmp, mode)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
