"""Build targets (config, kernel, modules, ...) with dependencies and
preconditions, from data/target/*.yaml."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .. import definitions
from .. import kconfig as kcfg
from ..errors import BadMakeGoal, DefinitionError, UnknownDefinition, UnknownTarget
from ..results import Status
from . import compression as compressions
from .arch import Arch

MAKE_PREFIX = "make:"  # make:<goal> runs any Kbuild goal (make:drivers/dma/)
# Not even dots: pytest's terminal shows "a.o" in an item name as "a::o".
_UNSAFE = re.compile(r"[^A-Za-z0-9_+-]+")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_RESERVED = ("O", "ARCH")  # spec.py's reserved make variables, which a goal cannot set

COMPRESS = "{compress}"  # a command word: the compression's command (compression.py)


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
    # Debian packages that are no tool on PATH (libraries perf links with)
    packages: tuple[str, ...] = ()
    # PyPI requirements installed with pip --no-deps on top of `packages`
    # (dtbs_check's dtschema, which Debian 12 does not package)
    pypi_packages: tuple[str, ...] = ()
    # tool -> Debian package: without it the target is a SKIP (with the
    # reason), not an ERROR (binrpm-pkg where rpmbuild is not installed)
    skip_without: Mapping[str, str] = field(default_factory=dict)
    # in the default set (kbuild without targets, a matrix without targets:)
    default: bool = True
    # seconds it may run unless a timeout is given for it by name (a boot:
    # a kernel that hangs would otherwise hold a job for the run's timeout)
    timeout: float | None = None

    @property
    def item_id(self) -> str:
        """The pytest item's name: the target's, made path-safe (make: goals)."""
        return self.name

    def adjust_makevars(self, makevars: dict[str, str], given: Mapping[str, str]) -> dict[str, str]:
        """The make variables this target's make commands get: *makevars*
        (the toolchain's and the user's, *given* being the user's)."""
        return makevars

    def judge(
        self,
        status: Status,
        reason: str,
        problems: Sequence[str],
        errors: Sequence[str],
        build_dir: Path,
    ) -> tuple[Status, str]:
        """The target's status once its commands ran: *problems* are the
        commands that failed without stopping it (``tolerates``), *errors*
        the compiler errors its log shows."""
        return status, reason

    def tolerates(self, cmd: Sequence[str]) -> bool:
        """Whether a failure of *cmd* lets the next commands run (``judge`` decides)."""
        return False

    @classmethod
    def load(cls, name: str, where: str = "") -> Target:
        try:
            return _load(name, where)
        except UnknownDefinition:
            # Any Kbuild goal is a target too: make:<goal>.
            known = [*definitions.available("target"), f"{MAKE_PREFIX}<goal>"]
            raise UnknownTarget(name, known, where) from None

    def _values(self, arch: Arch, build_dir: str, compression: str) -> dict[str, str]:
        return {
            "build_dir": build_dir,
            "z": compressions.get(compression).suffix,
            "kernel_image": arch.kernel_image,
            "kernel_image_name": os.path.basename(arch.kernel_image_path),
            "kernel_image_path": arch.kernel_image_path,
            "xip_image": arch.xip_image,
            "xip_image_path": arch.xip_image_path,
        }

    def expanded_commands(
        self, arch: Arch, build_dir: str, compression: str = "xz"
    ) -> list[list[str]]:
        """The commands with placeholders filled; ``make`` first means a Kbuild
        call. ``{compress}`` is *compression*'s command; none drops that command."""
        d = definitions.load("target", self.name)
        values = self._values(arch, build_dir, compression)
        compress = list(compressions.get(compression).command)
        out = []
        for cmd in self.commands:
            if cmd[0] == COMPRESS and not compress:
                continue
            argv: list[str] = []
            for a in cmd:
                argv += compress if a == COMPRESS else [definitions.expand(d, a, values)]
            out.append(argv)
        return out

    def compresses(self) -> bool:
        """Whether -z/--compression changes what this target runs."""
        return any(a == COMPRESS or "{z}" in a for cmd in self.commands for a in cmd)

    def expanded_artifacts(self, arch: Arch, compression: str = "xz") -> dict[str, str]:
        """Result file name -> path relative to the build directory."""
        d = definitions.load("target", self.name)
        values = self._values(arch, "", compression)
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


@dataclass(frozen=True)
class MakeGoalTarget(Target):
    """``make:<goal>``: any Kbuild goal (``make:drivers/dma/``,
    ``make:kernel/fork.o``, ``make:W=1 kernel/``), after config; no artifacts."""

    @property
    def item_id(self) -> str:
        return "make-" + _UNSAFE.sub("-", self.name[len(MAKE_PREFIX) :]).strip("-")

    def expanded_commands(
        self, arch: Arch, build_dir: str, compression: str = "xz"
    ) -> list[list[str]]:
        return [list(c) for c in self.commands]

    def expanded_artifacts(self, arch: Arch, compression: str = "xz") -> dict[str, str]:
        return {}


def make_goal(name: str, where: str = "") -> MakeGoalTarget:
    """The target ``make:<words>``: goals and VAR=value words, checked."""
    words = name[len(MAKE_PREFIX) :].split()
    goals = [w for w in words if not _ASSIGNMENT.match(w)]
    bad = [w for w in goals if w.startswith("-")]
    bad += [w for w in words if _ASSIGNMENT.match(w) and w.split("=")[0] in _RESERVED]
    if not goals or bad:
        why = (
            f"{bad[0]!r} is a make option or a variable set by pytest-kbuild" if bad else "no goal"
        )
        raise BadMakeGoal(name, why, where)
    return MakeGoalTarget(
        name=name,
        order=100,
        kind="commands",
        depends=("config",),
        commands=(("make", *words),),
        artifacts={},
        requires_arch="",
        requires_config=(),
        default=False,
    )


@dataclass(frozen=True)
class KselftestTarget(Target):
    """kselftest-install: a test directory that does not build makes the
    target a WARNING (passed with problems), not a FAIL; with LLVM, the
    selftests choose clang themselves (LLVM=-N and no CC/HOSTCC)."""

    install_dir: str = "kselftest_install"

    def adjust_makevars(self, makevars: dict[str, str], given: Mapping[str, str]) -> dict[str, str]:
        if "LLVM" not in makevars:
            return makevars
        return {k: v for k, v in makevars.items() if k not in ("CC", "HOSTCC") or k in given}

    def tolerates(self, cmd: Sequence[str]) -> bool:
        return cmd[0] == "make"

    def judge(
        self,
        status: Status,
        reason: str,
        problems: Sequence[str],
        errors: Sequence[str],
        build_dir: Path,
    ) -> tuple[Status, str]:
        if not (build_dir / self.install_dir / "run_kselftest.sh").is_file():
            why = problems[0] if problems else reason or "make kselftest-install"
            return Status.FAIL, f"{why}: nothing was installed"
        if status != Status.PASS or not (problems or errors):
            return status, reason
        dirs = sorted({d for e in errors if (d := _selftest_dir(e))})
        what = f"test dirs that did not build: {', '.join(dirs)}" if dirs else "errors in the log"
        return Status.WARNING, f"kselftest installed with problems ({what})"


def _selftest_dir(error: str) -> str:
    m = re.search(r"tools/testing/selftests/([^/:\s]+)/", error)
    return m.group(1) if m else ""


# Targets whose behaviour is more than commands: kind -> class.
_KINDS: dict[str, type[Target]] = {
    "commands": Target,
    "config": Target,
    "kselftest": KselftestTarget,
    "boot": Target,  # build/steps.py runs it through boot/qemu.py
    "kunit": Target,  # build/steps.py runs it through boot/kunit.py
}
KINDS = tuple(_KINDS)  # each has one runner (build/steps.py)


# A PyPI project name, optionally pinned: "dtschema", "dtschema==2022.12".
_PYPI_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:(?:==|>=|<=|~=)[\w.*+!-]+)?$")


@cache
def _load(name: str, where: str) -> Target:
    if name.startswith(MAKE_PREFIX):
        return make_goal(name, where)
    d = definitions.load("target", name, where)
    r, o = definitions.require, definitions.optional
    commands = o(d, "commands", list, [])
    if not all(isinstance(c, list) and c and all(isinstance(a, str) for a in c) for c in commands):
        raise DefinitionError(str(d.path), "'commands' must be a list of non-empty string lists")
    kind = o(d, "kind", str, "commands")
    if kind not in _KINDS:
        raise DefinitionError(str(d.path), f"kind {kind!r} is none of {', '.join(_KINDS)}")
    packages = o(d, "packages", list, [])
    if not all(isinstance(p, str) and p for p in packages):
        raise DefinitionError(str(d.path), "'packages' must be a list of Debian package names")
    pypi = o(d, "pypi_packages", list, [])
    if not all(isinstance(p, str) and _PYPI_REQUIREMENT.match(p) for p in pypi):
        raise DefinitionError(
            str(d.path),
            f"'pypi_packages' must be a list of PyPI requirements such as 'dtschema==2022.12', "
            f"not {pypi!r}",
        )
    return _KINDS[kind](
        name=d.name,
        order=r(d, "order", int),
        kind=kind,
        depends=tuple(o(d, "depends", list, [])),
        commands=tuple(tuple(c) for c in commands),
        artifacts={str(k): str(v) for k, v in o(d, "artifacts", dict, {}).items()},
        requires_arch=o(d, "requires_arch", str, ""),
        requires_config=tuple(o(d, "requires_config", list, [])),
        conflicts_config=tuple(o(d, "conflicts_config", list, [])),
        host_tools=_tool_map(d, "host_tools", o(d, "host_tools", dict, {})),
        config_tools=_config_tools(d, o(d, "config_tools", dict, {})),
        packages=tuple(packages),
        pypi_packages=tuple(pypi),
        skip_without=_tool_map(d, "skip_without", o(d, "skip_without", dict, {})),
        default=o(d, "default", bool, True),
        timeout=_seconds(d, o(d, "timeout", (int, float), None)),
    )


def _seconds(d: definitions.Definition, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or value <= 0:
        raise DefinitionError(str(d.path), f"'timeout' must be seconds above 0, not {value!r}")
    return float(value)


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
    """The targets built when none are named, in build order (TuxMake's
    default set): every data file but those saying ``default: false``."""
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
    return sorted(wanted, key=build_order)


def build_order(name: str) -> tuple[int, str]:
    """Sort key of target names: their order, then (make:<goal>s) the name."""
    return Target.load(name).order, name
