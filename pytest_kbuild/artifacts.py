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
            shutil.copyfile(src, dest)
            # um's kernel is a program: `linux` must stay runnable.
            shutil.copymode(src, dest)
        except OSError as err:
            if err.errno == errno.ENOSPC:
                raise KbuildInfraError(
                    f"no space left on device copying {name} to {dest}"
                ) from None
            raise
        result.artifacts.append(Artifact.of(dest))
