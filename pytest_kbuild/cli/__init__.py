"""Command lines: ``kbuild`` (one build, no pytest) and ``pytest-kbuild``
(definitions, matrices, results dirs, images, bisect)."""

from __future__ import annotations

from .commands import kbuild_main, main

__all__ = ["kbuild_main", "main"]
