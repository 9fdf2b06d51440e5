"""Matrix files: YAML -> validated, expanded, sorted list of BuildSpec.

No pytest here, and no clock, randomness or probing of the machine: every
xdist worker must expand a matrix to the same list. The one fact read from
the machine is the version a toolchain directory's compiler prints
(``llvm@DIR``, for its build id): the same files give every worker the same.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import spec as specs
from ..definitions.targets import default_targets
from ..errors import KbuildUserError, MatrixError
from ..parsers import FAIL_ON
from ..spec import BuildSpec, check_tree, kconfig_id
from . import yamlload
from .expander import Expander, Matrix

__all__ = ["MatrixFileExpander", "Matrix", "BuildSpec", "check_tree", "kconfig_id"]

VERSION = 1
AXES = ("arch", "toolchain", "kconfig")
_SETTINGS = (
    "kconfig_add",
    "targets",
    "make_variables",
    "env",
    "wrapper",
    "runtime",
    "fail_on",
    "timeout",
)
TOP_KEYS = ("version", "tree", *AXES, *_SETTINGS, "exclude", "include")
INCLUDE_KEYS = (*AXES, *_SETTINGS, "name")
EXCLUDE_KEYS = (*AXES, "reason")


class MatrixFileExpander(Expander):
    """Expands a matrix file: the product of its axes, less its excludes,
    plus its includes."""

    SCALAR_LISTS = (*AXES, "targets", "kconfig_add")
    MAPPING_LISTS = ("toolchain",)

    def expand(self, tree_override: str | Path | None, check: bool) -> Matrix:
        data = self.data
        if not isinstance(data, dict):
            raise self.error(
                "a matrix is a YAML mapping with keys " + ", ".join(TOP_KEYS), "matrix"
            )
        self._unknown_keys(data, TOP_KEYS, "matrix")
        version = data.get("version", VERSION)
        if version != VERSION or isinstance(version, bool):
            raise self.error(
                f"unsupported version {specs.short(version)}; accepted: {VERSION}",
                "matrix.version",
                data,
                "version",
            )
        tree = self._tree(data, tree_override, check)
        axes = {axis: self._axis(data, axis) for axis in AXES}
        base = self._settings(data, "matrix", defaults=None)
        excludes = self._excludes(data)
        used = [False] * len(excludes)
        builds = self._product(data, axes, base, excludes, used)
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
        ordered = tuple(sorted(builds.values(), key=lambda s: s.id))
        return Matrix(self.path, tree, ordered)

    # -- pieces ---------------------------------------------------------------
    def _product(
        self,
        data: Mapping[str, Any],
        axes: Mapping[str, list[tuple[str, int]]],
        base: dict[str, Any],
        excludes: list[tuple[dict[str, str], str]],
        used: list[bool],
    ) -> dict[str, BuildSpec]:
        """The builds of every combination of the axes, by id; an exclude
        that matches one marks it in *used* and makes it a SKIP."""
        builds: dict[str, BuildSpec] = {}
        positions: dict[str, tuple[int, ...]] = {}
        for index in itertools.product(*(range(len(axes[a])) for a in AXES)):
            combo = [axes[a][i] for a, i in zip(AXES, index, strict=True)]
            (arch, arch_line), (toolchain, _), (kcfg, _) = combo
            values = dict(arch=arch, toolchain=toolchain, kconfig=kcfg)
            reason = ""
            for i, (match, why) in enumerate(excludes):
                if all(values[k] == v for k, v in match.items()):
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
        return builds

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
        rules: dict[str, Callable[[Any], str]] = {
            "arch": specs.arch_name,
            # A toolchain's relative directory (llvm@bin) is the matrix file's.
            "toolchain": functools.partial(specs.toolchain_name, base_dir=self.path.parent),
            "kconfig": specs.kconfig_value,
        }
        rule = rules[axis]
        return self.check(rule, key, container, index, value)

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
                "fail_on": "",
                "timeout": None,
                "target_timeouts": {},
            }
        )
        fragments = self._list(entry, "kconfig_add", where)
        for i, frag in enumerate(fragments):
            self.check(specs.fragment, f"{where}.kconfig_add[{i}]", fragments, i, frag)
        out["kconfig_add"] = tuple(out["kconfig_add"]) + tuple(fragments)
        if "targets" in entry:
            targets = self._list(entry, "targets", where)
            for i, t in enumerate(targets):
                self.check(specs.target_names, f"{where}.targets[{i}]", targets, i, [t])
            key = f"{where}.targets"
            out["targets"] = self.check(specs.target_names, key, entry, "targets", targets)
        for key in ("make_variables", "env"):
            if key in entry:
                out[key] = {**out[key], **self._variables(entry, key, where)}
        if "wrapper" in entry:
            key = f"{where}.wrapper"
            out["wrapper"] = self.check(specs.wrapper_name, key, entry, "wrapper", entry["wrapper"])
        if "runtime" in entry:
            key, value = f"{where}.runtime", entry["runtime"]
            out["runtime"] = self.check(
                specs.runtime_name, key, entry, "runtime", value, self.runtimes
            )
        if "fail_on" in entry:
            key, value = f"{where}.fail_on", entry["fail_on"]
            out["fail_on"] = self.check(_fail_on, key, entry, "fail_on", value)
        if "timeout" in entry:
            key, value = f"{where}.timeout", entry["timeout"]
            if isinstance(value, dict):  # seconds per target
                for target, secs in value.items():
                    self.check(specs.timeouts, f"{key}.{target}", value, target, {target: secs})
                out["target_timeouts"] = {**out["target_timeouts"], **value}
            else:
                out["timeout"] = self.check(specs.seconds, key, entry, "timeout", value)
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
        name = self.check(specs.build_name, f"{key}.name", entry, "name", entry.get("name", ""))
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
        return specs.assemble(
            arch,
            toolchain,
            kcfg,
            s["targets"],
            kconfig_add=tuple(s["kconfig_add"]),
            make_variables=tuple(sorted(s["make_variables"].items())),
            env=tuple(sorted(s["env"].items())),
            wrapper=s["wrapper"],
            runtime=s["runtime"],
            name=name,
            origin=origin,
            line=line,
            skip_reason=reason,
            fail_on=s["fail_on"],
            timeout=s["timeout"],
            target_timeouts=specs.timeouts(s["target_timeouts"]),
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


def _fail_on(value: Any) -> str:
    if not isinstance(value, str) or value not in FAIL_ON:
        accepted = ", ".join(FAIL_ON)
        raise KbuildUserError(f"unknown policy {specs.short(value)}; accepted: {accepted}")
    return value
