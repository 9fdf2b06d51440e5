"""The Expander base: what a matrix file's and a TuxSuite plan's expanders
share (errors placed at a YAML key and line, spec.py's checks applied value
by value, the tree, lists, variables) and the Matrix they both return.

No pytest here, and no clock, randomness or probing of the machine: every
xdist worker must expand a matrix to the same list. The one fact read from
the machine is the version a toolchain directory's compiler prints
(``llvm@DIR``, for its build id): the same files give every worker the same.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .. import spec as specs
from ..errors import KbuildUserError, MatrixError
from ..spec import BuildSpec, check_tree
from . import yamlload

__all__ = ["Expander", "Matrix", "key_shown", "yaml_type"]

T = TypeVar("T")


@dataclass(frozen=True)
class Matrix:
    """A loaded matrix file: its path, kernel tree and builds in id order."""

    path: Path
    tree: Path
    builds: tuple[BuildSpec, ...]


class Expander:
    """Expands the YAML *data* read from *path* into a Matrix; a subclass
    says what its keys mean (``expand``). Errors are MatrixErrors naming the
    file, the key and its line."""

    # Keys whose single value stands for a list of one (``arch: x86_64``).
    SCALAR_LISTS: tuple[str, ...] = ()
    # Keys whose single mapping stands for a list of one (``toolchain: {name:, path:}``).
    MAPPING_LISTS: tuple[str, ...] = ()

    def __init__(self, path: Path, data: Any, runtimes: Collection[str], tree_where: str) -> None:
        self.tree_where = tree_where
        self.path = path
        self.data = data
        self.runtimes = runtimes

    def expand(self, tree_override: str | Path | None, check: bool) -> Matrix:
        """The Matrix of the data; *tree_override* wins over its tree:."""
        raise NotImplementedError

    def error(
        self, problem: str, key: str, container: Any = None, index: Any = None
    ) -> MatrixError:
        line = yamlload.line_of(container, index) if container is not None else None
        return MatrixError(str(self.path), problem, key, line)

    def check(self, rule: Callable[..., T], key: str, container: Any, index: Any, *args: Any) -> T:
        """``rule(*args)`` (a check of spec.py), its error placed at *key*."""
        try:
            return rule(*args)
        except KbuildUserError as err:
            raise self.error(str(err), key, container, index) from None

    def _unknown_keys(self, mapping: Mapping[Any, Any], accepted: Sequence[str], key: str) -> None:
        for k in mapping:
            if k not in accepted:
                raise self.error(
                    f"unknown key {specs.short(k)}; accepted: {', '.join(accepted)}",
                    f"{key}.{k if isinstance(k, str) and len(k) <= 40 else specs.short(k, 40)}",
                    mapping,
                    k,
                )

    def _tree(self, data: Mapping[str, Any], override: str | Path | None, check: bool) -> Path:
        if override is not None:
            tree, where = Path(override), self.tree_where
        elif data.get("tree") is not None:
            if not isinstance(data["tree"], str):
                raise self.error("must be a path (string)", "matrix.tree", data, "tree")
            if "\0" in data["tree"]:
                problem = f"{specs.short(data['tree'])} holds a NUL byte, which no path can"
                raise self.error(problem, "matrix.tree", data, "tree")
            tree = (self.path.parent / data["tree"]).resolve()
            line = yamlload.line_of(data, "tree")
            where = f"{self.path}:{line}: matrix.tree"
        else:
            tree, where = Path.cwd(), f"current directory (no tree: key nor {self.tree_where})"
        return check_tree(tree, where) if check else tree

    def _list(self, data: Mapping[str, Any], key: str, where: str = "matrix") -> list[Any]:
        value = data.get(key)
        if value is None:
            return []
        one = isinstance(value, dict) and key in self.MAPPING_LISTS
        if one or (isinstance(value, (str, int, float)) and key in self.SCALAR_LISTS):
            value = yamlload.LineList([value if one else str(value)])
            value.line = yamlload.line_of(data, key) or 0
            value.item_lines = [value.line]
            data[key] = value  # type: ignore[index]
        if not isinstance(value, list):
            raise self.error(f"must be a list, got {yaml_type(value)}", f"{where}.{key}", data, key)
        return value

    def _variables(self, entry: Mapping[str, Any], key: str, where: str) -> dict[str, str]:
        value = entry[key]
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error("must be a mapping of NAME: value", f"{where}.{key}", entry, key)
        pairs = [
            self.check(
                specs.variable, f"{where}.{key}.{key_shown(name)}", value, name, name, v, key
            )
            for name, v in value.items()
        ]
        return dict(pairs)


def yaml_type(value: Any) -> str:
    """The YAML name of a value's type, for messages."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else type(value).__name__


def key_shown(name: Any) -> str:
    """A mapping key as a location shows it: printable text as it is,
    anything else (a newline, a huge string) as a short repr on one line."""
    if isinstance(name, str) and name.isprintable() and len(name) <= 40:
        return name
    return specs.short(name, 40)
