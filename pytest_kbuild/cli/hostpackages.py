"""The Debian packages a build needs where make runs: what every kernel
build needs (data/image/common.yaml), the toolchain's for the arch, the
arch's host tools, the wrapper's, and those of each target (config_tools
included: the .config is not known before the build); a boot adds its
machine's QEMU, firmware and the init's C library (data/boot/<arch>.yaml).
`pytest-kbuild packages` prints them for a matrix; the curated images
install them too. What Debian does not package comes from PyPI (a target's
pypi_packages: dtbs_check's dtschema), printed by `pytest-kbuild packages --pypi`."""

from __future__ import annotations

import platform
from collections.abc import Iterable

from .. import definitions
from ..boot.qemu import Machine
from ..definitions.arch import Arch
from ..definitions.targets import Target, with_dependencies
from ..definitions.toolchain import Toolchain, Wrapper
from ..spec import BuildSpec


def common() -> list[str]:
    """What every kernel build needs, whatever its arch and targets."""
    return [
        str(p) for p in definitions.require(definitions.load("image", "common"), "packages", list)
    ]


def for_build(spec: BuildSpec, machine: str | None = None) -> set[str]:
    """The packages *spec* needs on a *machine* (default: this one)."""
    machine = machine or platform.machine()
    arch = Arch.load(spec.arch)
    wanted = set(common())
    wanted.update(Toolchain.load(spec.toolchain).debian_packages(arch, machine))
    wanted.update(arch.host_tools.values())
    wanted.update(Wrapper.load(spec.wrapper).debian_packages)
    for name in with_dependencies(spec.targets):
        target = Target.load(name)
        wanted.update(target.host_tools.values())
        wanted.update(target.packages)
        wanted.update(target.skip_without.values())
        for tools in target.config_tools.values():
            wanted.update(tools.values())
        if target.kind == "boot":
            qemu = Machine.load(arch.name)
            wanted.update(qemu.packages if qemu else [])
    return wanted


def for_builds(specs: Iterable[BuildSpec], machine: str | None = None) -> list[str]:
    """Every package the builds that are not skipped need, sorted."""
    wanted: set[str] = set()
    for spec in specs:
        if not spec.skip_reason:
            wanted |= for_build(spec, machine)
    return sorted(wanted)


def pypi_for_builds(specs: Iterable[BuildSpec]) -> list[str]:
    """The PyPI requirements of the targets the builds that are not skipped run, sorted."""
    names = {n for s in specs if not s.skip_reason for n in with_dependencies(s.targets)}
    return sorted({p for n in names for p in Target.load(n).pypi_packages})


def pypi_all() -> list[str]:
    """Every target's PyPI requirements, sorted (a curated image serves every target)."""
    targets = definitions.available("target")
    return sorted({p for n in targets for p in Target.load(n).pypi_packages})
