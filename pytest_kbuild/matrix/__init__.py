"""Matrix files and TuxSuite plans -> the Matrix of BuildSpecs to build.

``pytest_kbuild.matrix.load`` and the names below stay importable from here.
"""

from __future__ import annotations

from .matrixfile import BuildSpec, Matrix, check_tree, kconfig_id, load

__all__ = ["Matrix", "BuildSpec", "check_tree", "kconfig_id", "load"]
