"""pytest-kbuild: Linux kernel build matrices as pytest items."""

from __future__ import annotations

from .build import Build
from .errors import KbuildError, KbuildInfraError, KbuildUserError
from .matrix import BuildSpec, Matrix
from .matrix import load as load_matrix
from .results import Artifact, BuildResult, Status, TargetResult

__all__ = [
    "Artifact",
    "Build",
    "BuildResult",
    "BuildSpec",
    "KbuildError",
    "KbuildInfraError",
    "KbuildUserError",
    "Matrix",
    "Status",
    "TargetResult",
    "load_matrix",
]
