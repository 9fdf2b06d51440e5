"""pytest-kbuild: Linux kernel build matrices as pytest items."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .build.build import Build
    from .build.result import BuildResult
    from .errors import KbuildError, KbuildInfraError, KbuildUserError
    from .matrix import Matrix
    from .matrix import load as load_matrix
    from .options import BuildOptions
    from .results import Artifact, Status, TargetResult
    from .spec import BuildSpec

__all__ = [
    "Artifact",
    "Build",
    "BuildOptions",
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

# Public name -> (module, attribute). pytest imports this package for its
# entry point pytest_kbuild.plugin.hooks in every run of every project,
# matrix or not: importing build/ and matrix/ here would make them all pay for
# yaml, the runtimes and the definitions. PEP 562 imports them on first use.
_LAZY = {
    "Artifact": (".results", "Artifact"),
    "Build": (".build.build", "Build"),
    "BuildResult": (".build.result", "BuildResult"),
    "BuildOptions": (".options", "BuildOptions"),
    "BuildSpec": (".spec", "BuildSpec"),
    "KbuildError": (".errors", "KbuildError"),
    "KbuildInfraError": (".errors", "KbuildInfraError"),
    "KbuildUserError": (".errors", "KbuildUserError"),
    "Matrix": (".matrix", "Matrix"),
    "Status": (".results", "Status"),
    "TargetResult": (".results", "TargetResult"),
    "load_matrix": (".matrix", "load"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
