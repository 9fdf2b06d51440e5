"""Copy a target's artifacts from the build directory into the results."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from .arch import Arch
from .errors import KbuildInfraError
from .results import Artifact, Status, TargetResult
from .targets import Target


def collect(
    target: Target,
    arch: Arch,
    build_dir: Path,
    output_dir: Path,
    result: TargetResult,
    compression: str = "xz",
) -> None:
    """Copy each artifact of *target* into *output_dir* and list it in
    *result*; one that make did not produce fails the target."""
    for name, rel in target.expanded_artifacts(arch, compression).items():
        src = build_dir / rel
        if not src.is_file():
            result.status = Status.FAIL
            result.reason = f"{target.name} passed make but {rel} was not produced"
            result.errors.append(result.reason)
            continue
        _copy(src, output_dir / name, result)


def keep_made(
    target: Target,
    arch: Arch,
    build_dir: Path,
    output_dir: Path,
    result: TargetResult,
    since: float,
    compression: str = "xz",
) -> None:
    """Copy the artifacts a failed *target* did make (written at or after
    *since*, a time.time()): a config that fails its option check still
    leaves ``config``, the file a user needs to see why. An older file (an
    incremental build dir's earlier image) is not this run's and stays out."""
    for name, rel in target.expanded_artifacts(arch, compression).items():
        src = build_dir / rel
        try:
            made = src.is_file() and src.stat().st_mtime >= since
        except OSError:
            made = False
        if made:
            _copy(src, output_dir / name, result)


def _copy(src: Path, dest: Path, result: TargetResult) -> None:
    try:
        shutil.copyfile(src, dest)
    except OSError as err:
        if err.errno == errno.ENOSPC:
            raise KbuildInfraError(
                f"no space left on device copying {dest.name} to {dest}"
            ) from None
        raise
    result.artifacts.append(Artifact.of(dest))
