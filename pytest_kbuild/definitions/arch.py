"""Target architectures, built from data/arch/*.yaml."""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from .. import definitions
from ..errors import DefinitionError, UnknownArch, UnknownDefinition


@dataclass(frozen=True)
class Arch:
    """One kernel architecture: ARCH, cross prefix, image and dtbs facts.

    *kconfig_add* are fragments applied before the build's own (what makes a
    64-bit variant of an arch whose ARCH does not choose the word size).
    *cross_debian_packages* replaces, per toolchain family, that family's
    cross package templates (an arch with no GNU binutils, or that needs a
    second compiler). *korg_cross_compile* is the prefix kernel.org's
    crosstool compilers of this arch have (``aarch64-linux-``), tried after
    *cross_compile* (Debian's) in a toolchain directory (``gcc@DIR``).
    """

    name: str
    makevars: Mapping[str, str]
    srcarch: str
    cross_compile: str
    kernel_image: str
    kernel_image_path: str
    dtbs: bool
    clang: bool = True
    gcc: bool = True
    clang_makevars: Mapping[str, str] = field(default_factory=dict)
    gcc_makevars: Mapping[str, str] = field(default_factory=dict)
    gcc_debian_packages: tuple[str, ...] = ()
    native: tuple[str, ...] = ()
    xip_image: str = ""
    xip_image_path: str = ""
    host_tools: Mapping[str, str] = field(default_factory=dict)
    kconfig_add: tuple[str, ...] = ()
    cross_debian_packages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    korg_cross_compile: str = ""

    @classmethod
    def load(cls, name: str, where: str = "") -> Arch:
        """The arch called *name* or one of its aliases; raises UnknownArch."""
        try:
            return _load(name, where)
        except UnknownDefinition as err:
            known = definitions.available("arch") + list(definitions.aliases("arch"))
            raise UnknownArch(err.name, known, where) from None

    def with_kernel_image(self, name: str) -> Arch:
        """This arch building *name* (``Image.bz2``, ``vmlinux``) as its kernel
        image: vmlinux at the top of the build dir, others under arch/SRCARCH/boot/;
        itself when *name* is empty or already its image."""
        if not name or name == self.kernel_image:
            return self
        path = name if name == "vmlinux" else f"arch/{self.srcarch}/boot/{name}"
        return dataclasses.replace(self, kernel_image=name, kernel_image_path=path)

    def is_native(self, machine: str | None = None) -> bool:
        """True when *machine* (default: this host) builds this arch without CROSS_COMPILE."""
        return (machine or platform.machine()) in self.native

    def cross_compile_for(self, machine: str | None = None) -> str:
        """The CROSS_COMPILE prefix to use on *machine*; empty when native."""
        return "" if self.is_native(machine) else self.cross_compile

    def cross_prefixes(self) -> tuple[str, ...]:
        """Every prefix a cross gcc of this arch goes by: Debian's, then kernel.org's."""
        return tuple(dict.fromkeys(p for p in (self.cross_compile, self.korg_cross_compile) if p))


@cache
def _load(name: str, where: str) -> Arch:
    d = definitions.load("arch", name, where)
    r, o = definitions.require, definitions.optional
    return Arch(
        name=d.name,
        makevars={str(k): str(v) for k, v in r(d, "makevars", dict).items()},
        srcarch=r(d, "srcarch", str),
        cross_compile=r(d, "cross_compile", str),
        kernel_image=r(d, "kernel_image", str),
        kernel_image_path=r(d, "kernel_image_path", str),
        dtbs=r(d, "dtbs", bool),
        clang=o(d, "clang", bool, True),
        gcc=o(d, "gcc", bool, True),
        clang_makevars={str(k): str(v) for k, v in o(d, "clang_makevars", dict, {}).items()},
        gcc_makevars={str(k): str(v) for k, v in o(d, "gcc_makevars", dict, {}).items()},
        gcc_debian_packages=tuple(o(d, "gcc_debian_packages", list, [])),
        native=tuple(o(d, "native", list, [])),
        xip_image=o(d, "xip_image", str, ""),
        xip_image_path=o(d, "xip_image_path", str, ""),
        host_tools={str(k): str(v) for k, v in o(d, "host_tools", dict, {}).items()},
        kconfig_add=tuple(str(f) for f in o(d, "kconfig_add", list, [])),
        cross_debian_packages=_family_packages(d),
        korg_cross_compile=o(d, "korg_cross_compile", str, ""),
    )


def _family_packages(d: definitions.Definition) -> dict[str, tuple[str, ...]]:
    value = definitions.optional(d, "cross_debian_packages", dict, {})
    if not all(isinstance(v, list) and all(isinstance(p, str) for p in v) for v in value.values()):
        raise DefinitionError(
            str(d.path), "'cross_debian_packages' must map toolchain families to package lists"
        )
    return {str(k): tuple(v) for k, v in value.items()}
