"""Toolchains (gcc, gcc-N, clang, clang-N) and compiler wrappers, from data/."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from . import definitions
from .arch import Arch
from .errors import UnknownDefinition, UnknownToolchain, UnknownWrapper

_NAME = re.compile(r"^(?P<family>[a-z]+)(?:-(?P<version>\d+))?$")


@dataclass(frozen=True)
class Wrapper:
    """A compiler wrapper (ccache, sccache) or none."""

    name: str
    command: str
    cache_dir_env: str
    env: Mapping[str, str]
    stats: tuple[str, ...]
    debian_packages: tuple[str, ...]

    @classmethod
    def load(cls, name: str, where: str = "") -> Wrapper:
        try:
            return _load_wrapper(name, where)
        except UnknownDefinition:
            raise UnknownWrapper(name, definitions.available("wrapper"), where) from None

    def environment(self, build_dir: str, cache_dir: str | None) -> dict[str, str]:
        """Variables the wrapper needs for one build."""
        d = definitions.load("wrapper", self.name)
        env = {k: definitions.expand(d, v, {"build_dir": build_dir}) for k, v in self.env.items()}
        if cache_dir and self.cache_dir_env:
            env[self.cache_dir_env] = cache_dir
        return env


@cache
def _load_wrapper(name: str, where: str) -> Wrapper:
    d = definitions.load("wrapper", name, where)
    o = definitions.optional
    return Wrapper(
        name=d.name,
        command=definitions.require(d, "command", str),
        cache_dir_env=o(d, "cache_dir_env", str, ""),
        env={str(k): str(v) for k, v in o(d, "env", dict, {}).items()},
        stats=tuple(o(d, "stats", list, [])),
        debian_packages=tuple(o(d, "debian_packages", list, [])),
    )


@dataclass(frozen=True)
class Toolchain:
    """A compiler family at an optional version, e.g. clang-16 or gcc."""

    name: str
    family: str
    version: str

    @classmethod
    def load(cls, name: str, where: str = "") -> Toolchain:
        """Parse and validate *name* (``gcc``, ``gcc-12``, ``clang-16``...)."""
        m = _NAME.match(name)
        family = m.group("family") if m else ""
        version = str(int(m.group("version"))) if m and m.group("version") else ""
        if not m or definitions.canonical("toolchain", family) is None:
            raise UnknownToolchain(name, known(), where)
        d = definitions.load("toolchain", family)
        if version and int(version) not in definitions.optional(d, "versions", list, []):
            raise UnknownToolchain(name, known(), where)
        return cls(f"{d.name}-{version}" if version else d.name, d.name, version)

    def _values(self, arch: Arch, wrapper: Wrapper, machine: str | None) -> dict[str, str]:
        suffix = f"-{self.version}" if self.version else ""
        return {
            "cross_compile": arch.cross_compile_for(machine),
            "version": self.version,
            "version_suffix": suffix,
            "llvm": suffix or "1",
            "wrapper": f"{wrapper.command} " if wrapper.command else "",
            "triplet": arch.cross_compile_for(machine).rstrip("-"),
            # Debian package names cannot hold "_": gcc-x86-64-linux-gnu.
            "debian_triplet": arch.cross_compile_for(machine).rstrip("-").replace("_", "-"),
        }

    def supports(self, arch: Arch) -> str | None:
        """None when this toolchain can build *arch*, else the reason it cannot."""
        d = definitions.load("toolchain", self.family)
        flag = definitions.optional(d, "requires_arch", str, "")
        if flag and not getattr(arch, flag):
            return f"{self.name} cannot build arch {arch.name} (arch data: {flag}: false)"
        return None

    def makevars(self, arch: Arch, wrapper: Wrapper, machine: str | None = None) -> dict[str, str]:
        """ARCH, CROSS_COMPILE, CC, HOSTCC, LLVM... for building *arch*."""
        d = definitions.load("toolchain", self.family)
        values = self._values(arch, wrapper, machine)
        out = dict(arch.makevars)
        if values["cross_compile"]:
            out["CROSS_COMPILE"] = values["cross_compile"]
        for key, template in definitions.require(d, "makevars", dict).items():
            out[str(key)] = definitions.expand(d, str(template), values)
        extra = definitions.optional(d, "arch_makevars", str, "")
        if extra:
            # Arch-specific variables may use the same placeholders ({cross_compile}...).
            adef = definitions.load("arch", arch.name)
            out.update(
                {k: definitions.expand(adef, v, values) for k, v in getattr(arch, extra).items()}
            )
        return out

    def compiler(self, arch: Arch, machine: str | None = None) -> str:
        """The compiler command whose ``--version`` is recorded."""
        d = definitions.load("toolchain", self.family)
        values = self._values(arch, Wrapper.load("none"), machine)
        return definitions.expand(d, definitions.require(d, "compiler", str), values)

    def debian_packages(self, arch: Arch, machine: str | None = None) -> list[str]:
        """Debian packages that provide this toolchain for *arch* (for hints)."""
        d = definitions.load("toolchain", self.family)
        values = self._values(arch, Wrapper.load("none"), machine)
        templates = list(definitions.optional(d, "debian_packages", list, []))
        if values["cross_compile"]:
            templates += definitions.optional(d, "cross_debian_packages", list, [])
        return [definitions.expand(d, t, values) for t in templates]


def known() -> list[str]:
    """Every accepted toolchain name: each family and family-N."""
    names = []
    for family in definitions.available("toolchain"):
        d = definitions.load("toolchain", family)
        names.append(family)
        names += [f"{family}-{v}" for v in definitions.optional(d, "versions", list, [])]
    return names
