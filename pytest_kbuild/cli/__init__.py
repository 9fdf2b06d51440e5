"""Command lines: ``kbuild`` (one build, no pytest; kbuild.py) and
``pytest-kbuild`` (definitions, matrices, results dirs, images, bisect;
commands.py)."""

from __future__ import annotations

from .commands import main
from .kbuild import kbuild_main

__all__ = ["kbuild_main", "main"]
