"""One build: the Build (build.py) and what only a build uses: its record
(metadata.json), artifacts, probes, work dirs, reproducer.

``pytest_kbuild.build.Build`` stays importable from here; it is imported on
first use, so that a module of this package does not pay for all of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .build import Build

__all__ = ["Build"]


def __getattr__(name: str) -> Any:
    if name != "Build":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(".build", __name__).Build
