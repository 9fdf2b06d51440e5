"""BuildSpec: what to build, made and validated in one place.

The matrix expander, the ``kbuild`` command and the Python API all make
their BuildSpecs here, so a rule (a reserved make variable, an arch the
toolchain cannot build, the order of targets, the build id) is written once.
The field checks are public so that matrix/ can apply them value by value
and point at the YAML line of the bad one. No pytest import.
"""

from __future__ import annotations

import contextlib
import platform
import re
import reprlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from . import kconfig
from .definitions.arch import Arch
from .definitions.targets import Target, build_order, default_targets, with_dependencies
from .definitions.toolchain import Toolchain, Wrapper, id_name
from .errors import KbuildUserError, NotAKernelTree, UnknownRuntime

RESERVED_MAKE_VARIABLES = {
    "O": "the build directory is set by pytest-kbuild",
    "ARCH": "use the arch axis",
}
TREE_FILES = ("Makefile", "Kconfig", "Kbuild")
_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # fullmatch: "O\n" is no name
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")

Pairs = tuple[tuple[str, str], ...]


def _kbuild(*flags: str, positional: bool = False) -> dict[str, Any]:
    """Field metadata: the ``kbuild`` spelling of a spec field (for the
    command line parser and the reproducer, both derived from it)."""
    return {"kbuild": flags, "positional": positional}


@dataclass(frozen=True)
class BuildSpec:
    """One build: arch, toolchain, kconfig, fragments, targets, variables,
    wrapper and runtime, with its id and where it was declared.

    Make one with ``BuildSpec.make(...)``, which validates every field;
    ``skip_reason`` says why it is not built (a matrix exclude, or a
    toolchain that cannot build the arch).
    """

    id: str
    arch: str = field(metadata=_kbuild("-a", "--target-arch"))
    toolchain: str = field(metadata=_kbuild("-t", "--toolchain"))
    kconfig: str = field(metadata=_kbuild("-k", "--kconfig"))
    kconfig_add: tuple[str, ...] = field(default=(), metadata=_kbuild("-K", "--kconfig-add"))
    wrapper: str = field(default="none", metadata=_kbuild("-w", "--wrapper"))
    runtime: str = field(default="local", metadata=_kbuild("-r", "--runtime"))
    env: Pairs = field(default=(), metadata=_kbuild("-e", "--environment"))
    make_variables: Pairs = field(default=(), metadata=_kbuild(positional=True))
    targets: tuple[str, ...] = field(default=(), metadata=_kbuild(positional=True))
    name: str = ""
    origin: str = "matrix"
    line: int = 0
    skip_reason: str = ""
    # Seconds per target (a matrix's ``timeout: {modules: 3600}``): they win
    # over the build's and the run's timeout for those targets.
    target_timeouts: Pairs = field(default=(), metadata=_kbuild("--target-timeout"))
    # Per-build values of run-wide settings (a matrix's fail_on:, timeout:):
    # they win over the run's option for this build; unset, the option holds.
    fail_on: str = ""
    timeout: float | None = None
    # Targets of a matrix that can never apply to the arch (dtbs without
    # device trees), left out of the build with the reason: not collected.
    left_out: Pairs = ()
    # A TuxSuite plan's build (plan.py): its job, what the plan said that
    # runs differently here (label -> note, for the report and metadata),
    # targets collected as SKIP items with why (a TuxMake target, a boot
    # without its target) and the kernel image the plan asked for.
    job: str = ""
    notes: Pairs = ()
    unavailable: Pairs = ()
    kernel_image: str = ""
    base_dir: Path = field(default=Path("."), compare=False)

    @classmethod
    def make(
        cls,
        arch: str,
        toolchain: str | Mapping[str, str] = "gcc",
        kconfig: str = "defconfig",
        kconfig_add: Iterable[str] = (),
        targets: Iterable[str] | None = None,
        make_variables: Mapping[str, Any] | None = None,
        env: Mapping[str, Any] | None = None,
        wrapper: str = "none",
        runtime: str = "local",
        name: str = "",
        target_timeouts: Mapping[str, Any] | None = None,
        *,
        runtimes: Collection[str] | None = None,
        origin: str = "",
        line: int = 0,
        skip_reason: str = "",
        base_dir: Path | None = None,
    ) -> BuildSpec:
        """A validated BuildSpec; raises a KbuildUserError naming the bad value.

        *runtimes* are the runtime names known to the caller (runtime/'s
        Registry, which is above this module); without them the runtime's
        name is checked by Build when it makes the runtime (UnknownRuntime)."""
        return assemble(
            arch_name(arch, "target arch"),
            toolchain_name(toolchain, "toolchain", base_dir),
            kconfig_value(kconfig),
            target_names(default_targets() if targets is None else targets, "targets"),
            name=build_name(name),
            leave_out=False,
            kconfig_add=tuple(fragment(f) for f in kconfig_add),
            make_variables=variables(make_variables or {}, "make_variables"),
            env=variables(env or {}, "env"),
            wrapper=wrapper_name(wrapper, "wrapper"),
            runtime=runtime_name(runtime, runtimes, "runtime"),
            target_timeouts=timeouts(target_timeouts or {}, "target_timeouts"),
            origin=origin or "spec",
            line=line,
            skip_reason=skip_reason,
            base_dir=base_dir or Path.cwd(),
        )


def assemble(
    arch: str,
    toolchain: str,
    kconfig: str,
    targets: Iterable[str],
    *,
    origin: str,
    base_dir: Path,
    line: int = 0,
    name: str = "",
    skip_reason: str = "",
    fixed_id: str = "",
    leave_out: bool = True,
    **fields: Any,
) -> BuildSpec:
    """The BuildSpec of values already checked (BuildSpec.make, a matrix
    file, a plan): its id (*fixed_id*, else from arch, toolchain, kconfig and
    name), its targets less those that never apply to the arch (with
    *leave_out*, kept in ``left_out`` with why), and its skip reason
    (*skip_reason*, else why the toolchain cannot build the arch). *fields*
    are the other BuildSpec fields."""
    names: tuple[str, ...] = tuple(targets)
    left_out: Pairs = ()
    if leave_out and names:
        names, left_out = applicable(arch, names)
    return BuildSpec(
        id=fixed_id or build_id(arch, toolchain, kconfig, name),
        arch=arch,
        toolchain=toolchain,
        kconfig=kconfig,
        targets=names,
        left_out=left_out,
        name=name,
        origin=origin,
        line=line,
        skip_reason=skip_reason or unsupported(arch, toolchain),
        base_dir=base_dir,
        **fields,
    )


# Python API keywords (Build(tree, target_arch=...)) -> BuildSpec.make's.
_API_NAMES = {"target_arch": "arch", "environment": "env", "kconfig_base_dir": "base_dir"}
_MAKE_ARGS = [
    "arch",
    "toolchain",
    "kconfig",
    "kconfig_add",
    "targets",
    "make_variables",
    "env",
    "wrapper",
    "runtime",
    "name",
    "target_timeouts",
    "base_dir",
]


def from_keywords(
    keywords: dict[str, Any], runtimes: Collection[str], runtime: str | None = None
) -> BuildSpec:
    """The BuildSpec of the Python API's keywords, which are removed from
    *keywords* (the rest are BuildOptions'). *runtimes* are the known
    runtime names; *runtime* names a Runtime object given instead of a
    runtime name."""
    given = {}
    for key in list(keywords):
        name = _API_NAMES.get(key, key)
        if name in _MAKE_ARGS:
            given[name] = keywords.pop(key)
    given.setdefault("arch", platform.machine())
    known: tuple[str, ...] = tuple(runtimes)
    if runtime is not None:
        given["runtime"], known = runtime, (*known, runtime)
    return BuildSpec.make(**given, runtimes=known, origin="Build()")


def kbuild_fields() -> list[Any]:
    """The BuildSpec fields ``kbuild`` takes, with their spellings."""
    return [f for f in fields(BuildSpec) if "kbuild" in f.metadata]


def arch_name(value: Any, where: str = "") -> str:
    """The canonical arch name of *value* (an alias is accepted)."""
    return Arch.load(_scalar(value, "arch"), where).name


TOOLCHAIN_KEYS = ("name", "path")


def toolchain_name(value: Any, where: str = "", base_dir: Path | None = None) -> str:
    """The canonical name of a toolchain: ``gcc-12``, or for one from a
    directory ``NAME@DIR`` with DIR absolute (relative to *base_dir*, default
    the current directory) and NAME its id part (``llvm@DIR`` gets the
    probed major version: ``llvm-21@DIR``). A mapping ``{name: llvm-21,
    path: DIR}`` is ``llvm-21@DIR``."""
    if isinstance(value, Mapping):
        value = _toolchain_mapping(value)
    return Toolchain.load(_scalar(value, "toolchain"), where, base_dir).spec_name


def _toolchain_mapping(value: Mapping[Any, Any]) -> str:
    form = "{name: llvm-21, path: /opt/llvm-21/bin}"
    unknown = [k for k in value if k not in TOOLCHAIN_KEYS]
    if unknown:
        raise KbuildUserError(
            f"unknown key {_short(unknown[0])} in a toolchain mapping; accepted: "
            f"{', '.join(TOOLCHAIN_KEYS)} ({form})"
        )
    for key in TOOLCHAIN_KEYS:
        if not isinstance(value.get(key), str) or not value[key]:
            raise KbuildUserError(
                f"a toolchain mapping needs {key}: (a string), got {_short(value.get(key))}; "
                f"for example {form}"
            )
    if "@" in value["name"]:
        raise KbuildUserError(f"toolchain name {_short(value['name'])} must not hold '@'")
    return f"{value['name']}@{value['path']}"


def kconfig_value(value: Any) -> str:
    text = _scalar(value, "kconfig")
    kconfig.validate_kconfig(text)
    return text


def fragment(value: Any) -> str:
    if not isinstance(value, str):
        raise KbuildUserError(f"must be a string, got {_short(value)}")
    kconfig.validate_fragment(value)
    return value


def target_names(values: Iterable[Any], where: str = "") -> tuple[str, ...]:
    """Known target names, each once, in build order."""
    names = [_scalar(v, "target") for v in values]
    items: dict[str, str] = {}  # item id -> target: make:<goal> ids must stay apart
    for name in set(names):
        item = Target.load(name, where).item_id
        other = items.setdefault(item, name)
        if other != name:
            first, second = sorted((other, name))
            raise KbuildUserError(
                f"targets {first!r} and {second!r} would both be the item {item!r}: "
                "keep one of them"
            )
    if not names:
        raise KbuildUserError("must not be empty")
    return tuple(sorted(set(names), key=build_order))


def applicable(arch: str, targets: Iterable[str]) -> tuple[tuple[str, ...], Pairs]:
    """*targets* without those that can never apply to *arch* (a matrix's
    dtbs on x86_64), and those with why; all of them when none would be
    left (a build of only dtbs on x86_64 then shows its SKIP) or when a
    kept target depends on one."""
    a, names = Arch.load(arch), tuple(targets)
    why = {n: r for n in names if (r := Target.load(n).arch_reason(a))}
    kept = tuple(n for n in names if n not in why)
    needed = set(with_dependencies(kept))
    if not kept or needed & set(why):
        return names, ()
    return kept, tuple(sorted(why.items()))


def variable(name: Any, value: Any, what: str) -> tuple[str, str]:
    """One make variable or environment variable, checked."""
    if not isinstance(name, str) or not _VAR.fullmatch(name):
        raise KbuildUserError(f"{_short(name)} is not a variable name (letters, digits, _)")
    if what == "make_variables" and name in RESERVED_MAKE_VARIABLES:
        raise KbuildUserError(
            f"make variable {name} cannot be set: {RESERVED_MAKE_VARIABLES[name]}"
        )
    if isinstance(value, (dict, list)) or value is None:
        raise KbuildUserError(f"value must be a string or number, got {_short(value)}")
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if "\0" in text:
        raise KbuildUserError(f"value {_short(text)} holds a NUL byte, which no command can take")
    return name, text


def variables(mapping: Mapping[Any, Any], what: str) -> Pairs:
    return tuple(sorted(variable(k, v, what) for k, v in mapping.items()))


def seconds(value: Any) -> float:
    """A positive number of seconds (a matrix's timeout:, a target's)."""
    if isinstance(value, str):  # kbuild --target-timeout kernel=1800
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9:
        raise KbuildUserError(f"{_short(value)} is not a positive number of seconds")
    return float(value)


def timeouts(mapping: Mapping[Any, Any], where: str = "") -> Pairs:
    """Target name -> seconds, checked; seconds kept as text (``1800``)."""
    out = []
    for name, value in mapping.items():
        target = Target.load(_scalar(name, "target"), where).name
        try:
            out.append((target, f"{seconds(value):g}"))
        except KbuildUserError as err:
            raise KbuildUserError(f"timeout of target {target}: {err}") from None
    return tuple(sorted(out))


def wrapper_name(value: Any, where: str = "") -> str:
    return Wrapper.load(_scalar(value, "wrapper"), where).name


def runtime_name(value: Any, known: Collection[str] | None, where: str = "") -> str:
    """*value* if a runtime of that name is *known* (``null`` is ``local``);
    with *known* None, any name (the caller cannot know the runtimes)."""
    name = "local" if value is None else _scalar(value, "runtime")
    if known is not None and name not in known:
        raise UnknownRuntime(name, known, where)
    return "local" if name == "null" else name


def build_name(value: Any) -> str:
    if not isinstance(value, str) or (value and _UNSAFE.search(value)):
        raise KbuildUserError(f"name {_short(value)} must use only letters, digits and . _ + -")
    return value


def unsupported(arch: str, toolchain: str) -> str:
    """Why *toolchain* cannot build *arch*, or "" when it can."""
    return Toolchain.load(toolchain).supports(Arch.load(arch)) or ""


def build_id(arch: str, toolchain: str, kconfig: str, name: str = "") -> str:
    """``<arch>-<toolchain>-<kconfig id>[-<name>]``, path-safe (a toolchain
    from a directory gives its name, not its path: ``arm64-llvm-21-defconfig``)."""
    parts = [arch, id_name(toolchain), kconfig_id(kconfig)]
    return "-".join(parts + ([name] if name else []))


def kconfig_id(value: str) -> str:
    """A path-safe id part for a kconfig value (a target, path or URL)."""
    base = value.rstrip("/").rsplit("/", 1)[-1] or value
    return id_part(base) or "config"


def id_part(text: str) -> str:
    """*text* made path-safe for a build id ("" when nothing is left)."""
    return _UNSAFE.sub("_", text).strip("_")


def check_tree(tree: Path, where: str = "") -> Path:
    """*tree* if it looks like a kernel tree, else NotAKernelTree."""
    try:
        missing = [f for f in TREE_FILES if not (tree / f).is_file()]
    except OSError as err:  # a name too long, a loop of symbolic links
        raise NotAKernelTree(str(tree), TREE_FILES, where, err.strerror or str(err)) from None
    if missing:
        raise NotAKernelTree(str(tree), missing, where)
    return tree


def _scalar(value: Any, what: str) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise KbuildUserError(f"must be a string, got {_short(value)}")
    return str(value)


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 3, 5, 5, 60, 60


def short(value: Any, limit: int = 80) -> str:
    """A repr of *value* of at most *limit* characters, made without walking
    the whole value: a message never prints a whole (possibly huge, or
    alias-expanded) document."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_short = short
