"""Matrix files and TuxSuite plans -> the Matrix of BuildSpecs to build.

``load`` reads the YAML and hands it to the expander of its kind: a
``jobs:`` key makes it a TuxSuite plan (plan.py), anything else a matrix
file (matrixfile.py); both build on expander.py's Expander.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import yaml

from ..errors import MatrixError
from ..runtime import Registry
from ..spec import BuildSpec, check_tree, kconfig_id
from . import yamlload
from .expander import Matrix
from .matrixfile import MatrixFileExpander
from .plan import PlanExpander

__all__ = ["Matrix", "BuildSpec", "check_tree", "kconfig_id", "load"]


def load(
    path: str | Path,
    tree: str | Path | None = None,
    runtimes: Collection[str] | None = None,
    check: bool = True,
    tree_where: str = "--kbuild-tree",
    jobs: Sequence[str] = (),
) -> Matrix:
    """Read, validate and expand the matrix (or TuxSuite plan) at *path*.

    *tree* (e.g. from --kbuild-tree) overrides the file's ``tree:``; with
    neither, the current directory is the tree. *check* verifies the tree;
    *tree_where* names where *tree* came from in errors. *jobs* are globs
    of a plan's job names to expand (none: all).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise MatrixError(str(path), f"cannot read matrix: {err.strerror}") from None
    except UnicodeDecodeError as err:
        problem = f"not UTF-8 text (byte {err.start}); a matrix is a YAML file"
        raise MatrixError(str(path), problem) from None
    try:
        data = yamlload.load(text)
    except RecursionError:
        raise MatrixError(str(path), "invalid YAML: nested too deeply") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(err, "problem", None) or str(err)
        raise MatrixError(str(path), f"invalid YAML: {problem}", line=line) from None
    known = runtimes if runtimes is not None else Registry()
    if isinstance(data, dict) and "jobs" in data:
        return PlanExpander(path, data, known, tree_where, jobs).expand(tree, check)
    return MatrixFileExpander(path, data, known, tree_where).expand(tree, check)
