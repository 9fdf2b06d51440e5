"""Before a build runs: is every tool it needs on the runtime's PATH? And
before each target runs: every host tool its data file declares (host_tools,
and the config_tools its .config turns on)? A missing one is a ToolNotFound
that says what to install, and where."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..definitions import tooldir
from ..definitions.arch import Arch
from ..definitions.targets import Target
from ..definitions.toolchain import Toolchain, Wrapper
from ..errors import ToolNotFound, ToolTooOld
from ..runtime.base import Runtime


def check_tools(
    rt: Runtime,
    arch: Arch,
    toolchain: Toolchain,
    wrapper: Wrapper,
    makevars: Mapping[str, str] | None = None,
) -> None:
    """Raise ToolNotFound for the first of make, the compiler (the one a
    user's CROSS_COMPILE in *makevars* names), gcc's compat vDSO compiler
    (CROSS_COMPILE_COMPAT), the arch's host tools and the wrapper that *rt*
    cannot find."""
    makevars = makevars or {}
    cross = makevars.get("CROSS_COMPILE") if "CROSS_COMPILE" in makevars else None
    # A user's CROSS_COMPILE= (not the one a gcc directory's prefix gives).
    own = cross is not None and cross != toolchain.makevars(arch, wrapper).get("CROSS_COMPILE", "")
    compiler = toolchain.compiler(arch, cross_compile=cross if own else None)
    if toolchain.directory and not own and rt.which(compiler) is None:
        raise _not_in_directory(rt, arch, toolchain, compiler)
    wanted: list[tuple[str, str, list[str]]] = [
        ("make", "GNU make", ["make"]),
        (
            compiler,
            f"toolchain {toolchain.name} for {arch.name}"
            + (f" with CROSS_COMPILE={cross}" if own else ""),
            [] if own else toolchain.debian_packages(arch),
        ),
    ]
    compat = makevars.get("CROSS_COMPILE_COMPAT")
    if compat and toolchain.family == "gcc":
        what = f"the compat vDSO of {arch.name} (CROSS_COMPILE_COMPAT={compat}; "
        what += "CROSS_COMPILE_COMPAT= turns it off)"
        wanted.append((f"{compat}gcc", what, list(arch.gcc_debian_packages)))
    wanted += [(t, f"arch {arch.name}", [p]) for t, p in arch.host_tools.items()]
    if wrapper.command:
        wanted.append((wrapper.command, f"wrapper {wrapper.name}", list(wrapper.debian_packages)))
    for tool, what, packages in wanted:
        if rt.which(tool) is None:
            raise ToolNotFound(tool, f"{what} (runtime {rt.name})", install_hint(rt, packages))


def _not_in_directory(rt: Runtime, arch: Arch, toolchain: Toolchain, compiler: str) -> ToolNotFound:
    """The error of a toolchain directory without the compiler *arch* needs."""
    looked = toolchain.candidates(arch) or [compiler]
    what = f"toolchain {toolchain.spec_name} for {arch.name} (runtime {rt.name})"
    hint = f"looked for {', '.join(looked)}"
    if len(looked) > 1:
        hint += f" (the {arch.name} compiler as Debian, then kernel.org name it)"
    return ToolNotFound(compiler, what, hint, where=f"in {toolchain.directory}")


def check_version(toolchain: Toolchain, arch: Arch, tree: Path, facts: Mapping[str, Any]) -> None:
    """Raise ToolTooOld when the compiler's version (the record's toolchain
    *facts*: ``version_number``) is older than ``minimum_version``, what
    *tree*'s scripts/min-tool-version.sh says for it (either None: nothing
    to check)."""
    version, minimum = facts.get("version_number"), facts.get("minimum_version")
    if version and minimum and tooldir.older(version, minimum):
        what = f"toolchain {toolchain.spec_name} for {arch.name}"
        source = f"the tree {tree} (its scripts/min-tool-version.sh {toolchain.min_tool()})"
        raise ToolTooOld(what, version, minimum, source)


def check_target_tools(
    rt: Runtime, target: Target, build_dir: Path | None, extra: Mapping[str, str] | None = None
) -> None:
    """Raise ToolNotFound for the first host tool *target* runs (its data
    file's host_tools, and config_tools for options the build's .config in
    *build_dir* sets) that *rt* cannot find. Called when the target starts, so
    the targets before it still build on a machine that lacks it. *extra*
    are more tools (tool -> Debian package) the build's options need."""
    config = build_dir / ".config" if build_dir is not None else None
    text = config.read_text(errors="replace") if config is not None and config.is_file() else ""
    tools = {t: (p, "") for t, p in (extra or {}).items()}  # -z zstd: zstd
    tools.update(target.tools(text))
    for tool, (package, option) in tools.items():
        if rt.which(tool) is None:
            why = f", for {option} in the .config" if option else ""
            what = f"target {target.name}{why} (runtime {rt.name})"
            raise ToolNotFound(tool, what, install_hint(rt, [package]))


def install_hint(rt: Runtime, packages: list[str]) -> str:
    """How to get *packages* where *rt* looks: on this host, or into the image."""
    if not packages:
        return ""
    image = rt.describe().get("image")
    if isinstance(image, dict) and image.get("reference"):
        return (
            f"the image {image['reference']} lacks it: add the Debian packages "
            f"{' '.join(packages)} to it (see pytest-kbuild images build/check)"
        )
    return f"on Debian install: {' '.join(packages)}"
