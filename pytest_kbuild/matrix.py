"""Matrix files: YAML -> validated, expanded, sorted list of BuildSpec.

No pytest here, and no clock, randomness or probing of the machine: every
xdist worker must expand a matrix to the same list.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import kconfig, yamlload
from . import runtime as runtime_registry
from .arch import Arch
from .errors import KbuildUserError, MatrixError, NotAKernelTree
from .targets import Target, default_targets
from .toolchain import Toolchain, Wrapper

VERSION = 1
AXES = ("arch", "toolchain", "kconfig")
_SETTINGS = ("kconfig_add", "targets", "make_variables", "env", "wrapper", "runtime")
TOP_KEYS = ("version", "tree", *AXES, *_SETTINGS, "exclude", "include")
INCLUDE_KEYS = (*AXES, *_SETTINGS, "name")
EXCLUDE_KEYS = (*AXES, "reason")
_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")
RESERVED_MAKE_VARIABLES = {
    "O": "the build directory is set by pytest-kbuild",
    "ARCH": "use the arch axis",
}
TREE_FILES = ("Makefile", "Kconfig", "Kbuild")


@dataclass(frozen=True)
class BuildSpec:
    """One build of the matrix: what to build and where it was declared."""

    id: str
    arch: str
    toolchain: str
    kconfig: str
    kconfig_add: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    make_variables: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    wrapper: str = "none"
    runtime: str = "local"
    name: str = ""
    origin: str = "matrix"
    line: int = 0
    skip_reason: str = ""
    base_dir: Path = field(default=Path("."), compare=False)


@dataclass(frozen=True)
class Matrix:
    """A loaded matrix file: its path, kernel tree and builds in id order."""

    path: Path
    tree: Path
    builds: tuple[BuildSpec, ...]


def check_tree(tree: Path, where: str = "") -> Path:
    """*tree* if it looks like a kernel tree, else NotAKernelTree."""
    missing = [f for f in TREE_FILES if not (tree / f).is_file()]
    if missing:
        raise NotAKernelTree(str(tree), missing, where)
    return tree


def load(
    path: str | Path,
    tree: str | Path | None = None,
    runtimes: Iterable[str] | None = None,
    check: bool = True,
    tree_where: str = "--kbuild-tree",
) -> Matrix:
    """Read, validate and expand the matrix at *path*.

    *tree* (e.g. from --kbuild-tree) overrides the file's ``tree:``; with
    neither, the current directory is the tree. *check* verifies the tree;
    *tree_where* names where *tree* came from in errors.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise MatrixError(str(path), f"cannot read matrix: {err.strerror}") from None
    try:
        data = yamlload.load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(err, "problem", None) or str(err)
        raise MatrixError(str(path), f"invalid YAML: {problem}", line=line) from None
    known = tuple(runtimes) if runtimes is not None else tuple(runtime_registry.available())
    return _Expander(path, data, known, tree_where).expand(tree, check)


class _Expander:
    def __init__(self, path: Path, data: Any, runtimes: tuple[str, ...], tree_where: str) -> None:
        self.tree_where = tree_where
        self.path = path
        self.data = data
        self.runtimes = runtimes

    def error(
        self, problem: str, key: str, container: Any = None, index: Any = None
    ) -> MatrixError:
        line = yamlload.line_of(container, index) if container is not None else None
        return MatrixError(str(self.path), problem, key, line)

    def expand(self, tree_override: str | Path | None, check: bool) -> Matrix:
        data = self.data
        if not isinstance(data, dict):
            raise self.error(
                "a matrix is a YAML mapping with keys " + ", ".join(TOP_KEYS), "matrix"
            )
        self._unknown_keys(data, TOP_KEYS, "matrix")
        version = data.get("version", VERSION)
        if version != VERSION:
            raise self.error(
                f"unsupported version {version!r}; accepted: {VERSION}",
                "matrix.version",
                data,
                "version",
            )
        tree = self._tree(data, tree_override, check)
        axes = {axis: self._axis(data, axis) for axis in AXES}
        base = self._settings(data, "matrix", defaults=None)
        excludes = self._excludes(data)
        used = [False] * len(excludes)
        builds: dict[str, BuildSpec] = {}
        positions: dict[str, tuple[int, ...]] = {}
        for index in itertools.product(*(range(len(axes[a])) for a in AXES)):
            combo = [axes[a][i] for a, i in zip(AXES, index, strict=True)]
            (arch, arch_line), (toolchain, _), (kcfg, _) = combo
            reason = ""
            for i, (match, why) in enumerate(excludes):
                if all(
                    dict(arch=arch, toolchain=toolchain, kconfig=kcfg)[k] == v
                    for k, v in match.items()
                ):
                    used[i] = True
                    reason = reason or f"excluded by matrix.exclude[{i}]: {why}"
            origin = f"matrix (arch {arch}, toolchain {toolchain}, kconfig {kcfg})"
            spec = self._spec(arch, toolchain, kcfg, base, "", origin, arch_line, reason)
            if spec.id in positions:
                # Two values of one axis give the same id part (an alias, or
                # two kconfig paths with one file name): point at the second.
                axis, i = next(
                    (a, new)
                    for a, old, new in zip(AXES, positions[spec.id], index, strict=True)
                    if old != new
                )
                other = builds[spec.id]
                raise self.error(
                    f"duplicate build id {spec.id!r}: {other.origin} and {origin}; "
                    f"each {axis} value must give a distinct id",
                    f"matrix.{axis}[{i}]",
                    data[axis],
                    i,
                )
            positions[spec.id] = index
            self._add(builds, spec)
        for i, entry in enumerate(self._list(data, "include")):
            self._add(builds, self._include(data["include"], i, entry, base))
        for i, hit in enumerate(used):
            if not hit:
                raise self.error(
                    "matches no build of the matrix; remove it or fix its values",
                    f"matrix.exclude[{i}]",
                    data["exclude"],
                    i,
                )
        specs = tuple(sorted(builds.values(), key=lambda s: s.id))
        return Matrix(self.path, tree, specs)

    # -- pieces ---------------------------------------------------------------
    def _unknown_keys(self, mapping: Mapping[Any, Any], accepted: Sequence[str], key: str) -> None:
        for k in mapping:
            if k not in accepted:
                raise self.error(
                    f"unknown key {k!r}; accepted: {', '.join(accepted)}", f"{key}.{k}", mapping, k
                )

    def _tree(self, data: Mapping[str, Any], override: str | Path | None, check: bool) -> Path:
        if override is not None:
            tree, where = Path(override), self.tree_where
        elif data.get("tree") is not None:
            if not isinstance(data["tree"], str):
                raise self.error("must be a path (string)", "matrix.tree", data, "tree")
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
        if isinstance(value, (str, int, float)) and key in AXES + ("targets", "kconfig_add"):
            value = yamlload.LineList([str(value)])
            value.line = yamlload.line_of(data, key) or 0
            value.item_lines = [value.line]
            data[key] = value  # type: ignore[index]
        if not isinstance(value, list):
            raise self.error(
                f"must be a list, got {_yaml_type(value)}", f"{where}.{key}", data, key
            )
        return value

    def _axis(self, data: Mapping[str, Any], axis: str) -> list[tuple[str, int]]:
        values = self._list(data, axis)
        if not values and axis != "kconfig":
            raise self.error(
                f"missing or empty; give a list of {axis} names", f"matrix.{axis}", data, axis
            )
        if not values:
            return [("defconfig", 0)]
        out = []
        for i, v in enumerate(values):
            key = f"matrix.{axis}[{i}]"
            out.append((self._name(axis, v, key, values, i), yamlload.line_of(values, i) or 0))
        return out

    def _name(self, axis: str, value: Any, key: str, container: Any, index: Any) -> str:
        """Canonical name for an axis value, or a MatrixError naming it."""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise self.error(f"must be a string, got {value!r}", key, container, index)
        value = str(value)
        try:
            if axis == "arch":
                return Arch.load(value).name
            if axis == "toolchain":
                return Toolchain.load(value).name
            kconfig.validate_kconfig(value)
            return str(value)
        except KbuildUserError as err:
            raise MatrixError(
                str(self.path), str(err), key, yamlload.line_of(container, index)
            ) from None

    def _settings(
        self, entry: Mapping[str, Any], where: str, defaults: dict[str, Any] | None
    ) -> dict[str, Any]:
        out: dict[str, Any] = (
            dict(defaults)
            if defaults
            else {
                "kconfig_add": (),
                "targets": tuple(default_targets()),
                "make_variables": {},
                "env": {},
                "wrapper": "none",
                "runtime": "local",
            }
        )
        fragments = self._list(entry, "kconfig_add", where)
        for i, frag in enumerate(fragments):
            key = f"{where}.kconfig_add[{i}]"
            if not isinstance(frag, str):
                raise self.error(f"must be a string, got {frag!r}", key, fragments, i)
            try:
                kconfig.validate_fragment(frag)
            except KbuildUserError as err:
                raise self.error(str(err), key, fragments, i) from None
        out["kconfig_add"] = tuple(out["kconfig_add"]) + tuple(fragments)
        if "targets" in entry:
            targets = self._list(entry, "targets", where)
            for i, t in enumerate(targets):
                try:
                    Target.load(str(t))
                except KbuildUserError as err:
                    raise self.error(str(err), f"{where}.targets[{i}]", targets, i) from None
            if not targets:
                raise self.error("must not be empty", f"{where}.targets", entry, "targets")
            out["targets"] = tuple(
                sorted(set(map(str, targets)), key=lambda n: Target.load(n).order)
            )
        for key in ("make_variables", "env"):
            if key in entry:
                out[key] = {**out[key], **self._variables(entry, key, where)}
        if "wrapper" in entry:
            try:
                out["wrapper"] = Wrapper.load(str(entry["wrapper"])).name
            except KbuildUserError as err:
                raise self.error(str(err), f"{where}.wrapper", entry, "wrapper") from None
        if "runtime" in entry:
            runtime = "local" if entry["runtime"] is None else str(entry["runtime"])
            if runtime not in self.runtimes:
                raise self.error(
                    f"unknown runtime {runtime!r}; known: {', '.join(sorted(self.runtimes))}",
                    f"{where}.runtime",
                    entry,
                    "runtime",
                )
            out["runtime"] = "local" if runtime == "null" else runtime
        return out

    def _variables(self, entry: Mapping[str, Any], key: str, where: str) -> dict[str, str]:
        value = entry[key]
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error("must be a mapping of NAME: value", f"{where}.{key}", entry, key)
        out = {}
        for name, v in value.items():
            k = f"{where}.{key}.{name}"
            if not isinstance(name, str) or not _VAR.match(name):
                raise self.error(
                    f"{name!r} is not a variable name (letters, digits, _)", k, value, name
                )
            if key == "make_variables" and name in RESERVED_MAKE_VARIABLES:
                raise self.error(
                    f"{name} cannot be set here: {RESERVED_MAKE_VARIABLES[name]}", k, value, name
                )
            if isinstance(v, (dict, list)) or v is None:
                raise self.error(f"value must be a string or number, got {v!r}", k, value, name)
            out[name] = str(v).lower() if isinstance(v, bool) else str(v)
        return out

    def _excludes(self, data: Mapping[str, Any]) -> list[tuple[dict[str, str], str]]:
        entries = self._list(data, "exclude")
        out = []
        for i, entry in enumerate(entries):
            key = f"matrix.exclude[{i}]"
            if not isinstance(entry, dict):
                raise self.error(
                    "must be a mapping like {arch: arm64, reason: ...}", key, entries, i
                )
            self._unknown_keys(entry, EXCLUDE_KEYS, key)
            reason = entry.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                raise self.error(
                    "needs a reason: (why this combination is not built)", key, entries, i
                )
            match = {
                axis: self._name(axis, entry[axis], f"{key}.{axis}", entry, axis)
                for axis in AXES
                if axis in entry
            }
            if not match:
                raise self.error(f"matches on none of {', '.join(AXES)}", key, entries, i)
            out.append((match, reason.strip()))
        return out

    def _include(self, entries: Any, i: int, entry: Any, base: dict[str, Any]) -> BuildSpec:
        key = f"matrix.include[{i}]"
        if not isinstance(entry, dict):
            raise self.error(
                "must be a mapping like {arch: arm, toolchain: gcc, kconfig: ...}", key, entries, i
            )
        self._unknown_keys(entry, INCLUDE_KEYS, key)
        for axis in ("arch", "toolchain"):
            if axis not in entry:
                raise self.error(f"missing {axis}:", key, entries, i)
        arch, toolchain = (
            self._name(a, entry[a], f"{key}.{a}", entry, a) for a in ("arch", "toolchain")
        )
        kcfg = self._name(
            "kconfig", entry.get("kconfig", "defconfig"), f"{key}.kconfig", entry, "kconfig"
        )
        name = entry.get("name", "")
        if not isinstance(name, str) or (name and _UNSAFE.search(name)):
            raise self.error(
                f"name {name!r} must use only letters, digits and . _ + -",
                f"{key}.name",
                entry,
                "name",
            )
        settings = self._settings(entry, key, base)
        return self._spec(
            arch, toolchain, kcfg, settings, name, key, yamlload.line_of(entries, i) or 0, ""
        )

    def _spec(
        self,
        arch: str,
        toolchain: str,
        kcfg: str,
        s: Mapping[str, Any],
        name: str,
        origin: str,
        line: int,
        reason: str,
    ) -> BuildSpec:
        if not reason:
            reason = Toolchain.load(toolchain).supports(Arch.load(arch)) or ""
        parts = [arch, toolchain, kconfig_id(kcfg)] + ([name] if name else [])
        return BuildSpec(
            id="-".join(parts),
            arch=arch,
            toolchain=toolchain,
            kconfig=kcfg,
            kconfig_add=tuple(s["kconfig_add"]),
            targets=tuple(s["targets"]),
            make_variables=tuple(sorted(s["make_variables"].items())),
            env=tuple(sorted(s["env"].items())),
            wrapper=s["wrapper"],
            runtime=s["runtime"],
            name=name,
            origin=origin,
            line=line,
            skip_reason=reason,
            base_dir=self.path.parent,
        )

    def _add(self, builds: dict[str, BuildSpec], spec: BuildSpec) -> None:
        other = builds.get(spec.id)
        if other is not None:
            raise MatrixError(
                str(self.path),
                f"duplicate build id {spec.id!r}: {other.origin} (line {other.line}) and "
                f"{spec.origin} (line {spec.line}); "
                "add name: to an include entry to tell them apart",
                spec.origin,
                spec.line,
            )
        builds[spec.id] = spec


def kconfig_id(value: str) -> str:
    """A path-safe id part for a kconfig value (a target, path or URL)."""
    base = value.rstrip("/").rsplit("/", 1)[-1] or value
    return _UNSAFE.sub("_", base).strip("_") or "config"


def _yaml_type(value: Any) -> str:
    """The YAML name of a value's type, for messages."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else type(value).__name__
