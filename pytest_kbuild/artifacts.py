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
    since: float = 0.0,
) -> None:
    """Copy each artifact of *target* into *output_dir* and list it in
    *result*; one that make did not produce fails the target. An artifact
    named with ``*`` (``{"*.deb": "../*.deb"}``) is every file its path
    matches that was written after *since* (a time.time()): bindeb-pkg
    writes beside the build directory, where earlier runs' files may lie."""
    for name, rel in target.expanded_artifacts(arch).items():
        if "*" in name:
            found = [p for p in sorted(build_dir.glob(rel)) if _newer(p, since)]
            sources = [(p, p.name) for p in found]
        else:
            sources = [(build_dir / rel, name)] if (build_dir / rel).is_file() else []
        if not sources:
            result.status = Status.FAIL
            result.reason = f"{target.name} passed make but {rel} was not produced"
            result.errors.append(result.reason)
            continue
        for src, dest_name in sources:
            _copy(src, output_dir / dest_name, result)


def _newer(path: Path, since: float) -> bool:
    try:
        return path.is_file() and path.stat().st_mtime >= since - 1
    except OSError:
        return False


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
