"""Copy a target's artifacts from the build directory into the results."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from .arch import Arch
from .errors import KbuildInfraError
from .results import Artifact, Status, TargetResult, file_mode
from .targets import Target


def collect(
    target: Target, arch: Arch, build_dir: Path, output_dir: Path, result: TargetResult
) -> None:
    """Copy each artifact of *target* into *output_dir* and list it in
    *result*; one that make did not produce fails the target."""
    for name, rel in target.expanded_artifacts(arch).items():
        src = build_dir / rel
        if not src.is_file():
            result.status = Status.FAIL
            result.reason = f"{target.name} passed make but {rel} was not produced"
            result.errors.append(result.reason)
            continue
        dest = output_dir / name
        try:
            copy(src, dest)
        except OSError as err:
            raise KbuildInfraError(f"cannot copy {name} to {dest}: {err.strerror or err}") from None
        result.artifacts.append(Artifact.of(dest))


def copy(src: Path, dest: Path) -> None:
    """Copy *src* to *dest* under a temporary name, then rename it: a copy cut
    short (a full disk, a killed run) never looks like a result."""
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out, src.open("rb") as f:
            shutil.copyfileobj(f, out)
        os.chmod(tmp, file_mode())
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
