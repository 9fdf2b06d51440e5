"""Build targets (config, kernel, modules, ...) with dependencies and
preconditions, from data/target/*.yaml."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from . import definitions
from . import kconfig as kcfg
from .arch import Arch
from .errors import DefinitionError, UnknownDefinition, UnknownTarget


@dataclass(frozen=True)
class Target:
    """One build target: the commands it runs and the artifacts it keeps."""

    name: str
    order: int
    kind: str
    depends: tuple[str, ...]
    commands: tuple[tuple[str, ...], ...]
    artifacts: Mapping[str, str]
    requires_arch: str
    requires_config: tuple[str, ...]
    conflicts_config: tuple[str, ...] = ()
    # tool on PATH -> Debian package, for every build of this target
    host_tools: Mapping[str, str] = field(default_factory=dict)
    # CONFIG_X=v -> {tool: package}, for builds whose .config sets it
    config_tools: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # In the default set (no targets: given); boot runs only when asked for.
    default: bool = True

    @classmethod
    def load(cls, name: str, where: str = "") -> Target:
        try:
            return _load(name, where)
        except UnknownDefinition:
            raise UnknownTarget(name, definitions.available("target"), where) from None

    def _values(self, arch: Arch, build_dir: str) -> dict[str, str]:
        return {
            "build_dir": build_dir,
            "kernel_image": arch.kernel_image,
            "kernel_image_name": os.path.basename(arch.kernel_image_path),
            "kernel_image_path": arch.kernel_image_path,
            "xip_image": arch.xip_image,
            "xip_image_path": arch.xip_image_path,
        }

    def expanded_commands(self, arch: Arch, build_dir: str) -> list[list[str]]:
        """The commands with placeholders filled; ``make`` first means a Kbuild call."""
        d = definitions.load("target", self.name)
        values = self._values(arch, build_dir)
        return [[definitions.expand(d, a, values) for a in cmd] for cmd in self.commands]

    def expanded_artifacts(self, arch: Arch) -> dict[str, str]:
        """Result file name -> path relative to the build directory."""
        d = definitions.load("target", self.name)
        values = self._values(arch, "")
        return {
            definitions.expand(d, k, values): definitions.expand(d, v, values)
            for k, v in self.artifacts.items()
        }

    def config_reason(self, config_text: str) -> str | None:
        """None when the .config (*config_text*) lets this target run, else
        why not: a required option unset, or a conflicting one set."""
        missing = kcfg.unmet(self.requires_config, config_text)
        if missing:
            return f"{self.name} needs {', '.join(missing)}, which the .config does not set"
        conflicts = kcfg.met(self.conflicts_config, config_text)
        if conflicts:
            return f"{self.name} does not apply: the .config sets {', '.join(conflicts)}"
        return None

    def tools(self, config_text: str) -> dict[str, tuple[str, str]]:
        """tool -> (Debian package, why) for the host tools this target runs
        with *config_text* as its .config; why is "" or the option that needs it."""
        out = {tool: (package, "") for tool, package in self.host_tools.items()}
        for option in kcfg.met(tuple(self.config_tools), config_text):
            for tool, package in self.config_tools[option].items():
                out.setdefault(tool, (package, option))
        return out

    def arch_reason(self, arch: Arch) -> str | None:
        """None when *arch* supports this target, else why not (a skip reason)."""
        if self.requires_arch and not getattr(arch, self.requires_arch):
            why = f"arch data: no {self.requires_arch}"
            return f"{self.name} does not apply to arch {arch.name} ({why})"
        return None


@cache
def _load(name: str, where: str) -> Target:
    d = definitions.load("target", name, where)
    r, o = definitions.require, definitions.optional
    commands = o(d, "commands", list, [])
    if not all(isinstance(c, list) and c and all(isinstance(a, str) for a in c) for c in commands):
        raise DefinitionError(str(d.path), "'commands' must be a list of non-empty string lists")
    return Target(
        name=d.name,
        order=r(d, "order", int),
        kind=o(d, "kind", str, "commands"),
        depends=tuple(o(d, "depends", list, [])),
        commands=tuple(tuple(c) for c in commands),
        artifacts={str(k): str(v) for k, v in o(d, "artifacts", dict, {}).items()},
        requires_arch=o(d, "requires_arch", str, ""),
        requires_config=tuple(o(d, "requires_config", list, [])),
        conflicts_config=tuple(o(d, "conflicts_config", list, [])),
        host_tools=_tool_map(d, "host_tools", o(d, "host_tools", dict, {})),
        config_tools=_config_tools(d, o(d, "config_tools", dict, {})),
        default=o(d, "default", bool, True),
    )


def _tool_map(d: definitions.Definition, key: str, value: object) -> dict[str, str]:
    """A {tool: Debian package} mapping of strings, or a DefinitionError."""
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k and isinstance(v, str) and v for k, v in value.items()
    ):
        raise DefinitionError(
            str(d.path), f"{key!r} must map tool names to Debian packages, e.g. {{rsync: rsync}}"
        )
    return dict(value)


def _config_tools(
    d: definitions.Definition, value: dict[object, object]
) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for option, tools in value.items():
        if not isinstance(option, str) or kcfg.parse_literal(option) is None:
            raise DefinitionError(
                str(d.path),
                f"config_tools key {option!r} must be a .config line such as CONFIG_KERNEL_LZO=y",
            )
        out[option] = _tool_map(d, f"config_tools.{option}", tools)
    return out


def default_targets() -> list[str]:
    """Every defined target but those marked ``default: false`` (boot), in
    build order (TuxMake's default set)."""
    names = [n for n in definitions.available("target") if Target.load(n).default]
    return sorted(names, key=lambda n: Target.load(n).order)


def with_dependencies(names: Iterable[str]) -> list[str]:
    """*names* plus everything they depend on, in build order."""
    wanted: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(Target.load(name).depends)
    return sorted(wanted, key=lambda n: Target.load(n).order)
