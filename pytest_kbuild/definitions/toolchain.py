"""Toolchains (gcc, gcc-N, clang, clang-N) and compiler wrappers, from data/."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from urllib.parse import urlsplit

from .. import definitions
from ..errors import (
    DefinitionError,
    KbuildUserError,
    UnknownDefinition,
    UnknownToolchain,
    UnknownWrapper,
)
from ..parsers import redact as redact  # moved down; build/ imports it from here
from .arch import Arch

_NAME = re.compile(r"^(?P<family>[a-z]+)(?:-(?P<version>\d+))?$")


@dataclass(frozen=True)
class Wrapper:
    """A compiler wrapper (ccache, sccache) or none.

    *defaults* tune the wrapper (a build's own env wins over them); *env*,
    the cache directory and the remote storage are set for every build.
    *counters* name figures (hits, misses...) as sums of the counter lines
    the wrapper writes to the file named by *stats_log_env*.
    """

    name: str
    command: str
    cache_dir_env: str
    env: Mapping[str, str]
    stats: tuple[str, ...]
    debian_packages: tuple[str, ...]
    defaults: Mapping[str, str] = field(default_factory=dict)
    remote_env: tuple[str, ...] = ()
    remote_schemes: tuple[str, ...] = ()
    stats_log_env: str = ""
    counters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # False: the wrapper hashes the whole command line, so reproducible
    # mode's debug prefix map leaves out the (per-build) build dir.
    prefix_map_build_dir: bool = True

    @classmethod
    def load(cls, name: str, where: str = "") -> Wrapper:
        try:
            return _load_wrapper(name, where)
        except UnknownDefinition:
            raise UnknownWrapper(name, definitions.available("wrapper"), where) from None

    def environment(
        self, build_dir: str, cache_dir: str | None, remote: str | None = None
    ) -> dict[str, str]:
        """Variables the wrapper needs for one build."""
        d = definitions.load("wrapper", self.name)
        env = {k: definitions.expand(d, v, {"build_dir": build_dir}) for k, v in self.env.items()}
        if cache_dir and self.cache_dir_env:
            env[self.cache_dir_env] = cache_dir
        if remote:
            env.update(dict.fromkeys(self.remote_env, remote))
        return env

    def default_environment(self, build_dir: str) -> dict[str, str]:
        """Tuning variables, for a build whose own env does not set them."""
        d = definitions.load("wrapper", self.name)
        values = {"build_dir": build_dir}
        return {k: definitions.expand(d, v, values) for k, v in self.defaults.items()}

    def check_remote(self, url: str, where: str) -> None:
        """Raise KbuildUserError unless this wrapper can use remote storage *url*."""
        if not self.command:
            return  # no wrapper, no cache: the remote storage is not used
        scheme = urlsplit(url).scheme
        if not self.remote_env:
            raise KbuildUserError(f"{where}: wrapper {self.name} has no remote storage")
        if scheme not in self.remote_schemes:
            raise KbuildUserError(
                f"{where}: {redact(url)!r} is not a remote storage URL wrapper {self.name} "
                f"accepts; accepted schemes: {', '.join(self.remote_schemes)}"
            )

    def counts(self, log: str) -> dict[str, int]:
        """The figures of *counters* summed over the counter lines of *log*."""
        lines: dict[str, int] = {}
        for line in log.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                lines[line] = lines.get(line, 0) + 1
        return {name: sum(lines.get(c, 0) for c in ids) for name, ids in self.counters.items()}


@cache
def _load_wrapper(name: str, where: str) -> Wrapper:
    d = definitions.load("wrapper", name, where)
    o = definitions.optional
    counters = o(d, "counters", dict, {})
    if not all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) for v in counters.values()
    ):
        raise DefinitionError(str(d.path), "'counters' must map names to lists of counter ids")
    return Wrapper(
        name=d.name,
        command=definitions.require(d, "command", str),
        cache_dir_env=o(d, "cache_dir_env", str, ""),
        env={str(k): str(v) for k, v in o(d, "env", dict, {}).items()},
        stats=tuple(o(d, "stats", list, [])),
        debian_packages=tuple(o(d, "debian_packages", list, [])),
        defaults={str(k): str(v) for k, v in o(d, "defaults", dict, {}).items()},
        remote_env=tuple(o(d, "remote_env", list, [])),
        remote_schemes=tuple(o(d, "remote_schemes", list, [])),
        stats_log_env=o(d, "stats_log_env", str, ""),
        counters={str(k): tuple(v) for k, v in counters.items()},
        prefix_map_build_dir=o(d, "prefix_map_build_dir", bool, True),
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

    def _values(
        self, arch: Arch, wrapper: Wrapper, machine: str | None, cross_compile: str | None = None
    ) -> dict[str, str]:
        suffix = f"-{self.version}" if self.version else ""
        cross = arch.cross_compile_for(machine) if cross_compile is None else cross_compile
        return {
            "cross_compile": cross,
            "version": self.version,
            "version_suffix": suffix,
            "llvm": suffix or "1",
            "wrapper": f"{wrapper.command} " if wrapper.command else "",
            "triplet": cross.rstrip("-"),
            # Debian package names cannot hold "_": gcc-x86-64-linux-gnu.
            "debian_triplet": cross.rstrip("-").replace("_", "-"),
        }

    def supports(self, arch: Arch) -> str | None:
        """None when this toolchain can build *arch*, else the reason it cannot."""
        d = definitions.load("toolchain", self.family)
        flag = definitions.optional(d, "requires_arch", str, "")
        if flag and not getattr(arch, flag):
            return f"{self.name} cannot build arch {arch.name} (arch data: {flag}: false)"
        return None

    def makevars(
        self,
        arch: Arch,
        wrapper: Wrapper,
        machine: str | None = None,
        cross_compile: str | None = None,
    ) -> dict[str, str]:
        """ARCH, CROSS_COMPILE, CC, HOSTCC, LLVM... for building *arch*; a
        user's *cross_compile* (``CROSS_COMPILE=`` make variable) replaces the
        arch's prefix in CC and every other variable, as in binutils'."""
        d = definitions.load("toolchain", self.family)
        values = self._values(arch, wrapper, machine, cross_compile)
        out = dict(arch.makevars)
        if values["cross_compile"] or cross_compile is not None:
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

    def compiler(
        self, arch: Arch, machine: str | None = None, cross_compile: str | None = None
    ) -> str:
        """The compiler command whose ``--version`` is recorded."""
        d = definitions.load("toolchain", self.family)
        values = self._values(arch, Wrapper.load("none"), machine, cross_compile)
        return definitions.expand(d, definitions.require(d, "compiler", str), values)

    def describe(self, arch: Arch, cross_compile: str | None = None) -> dict[str, str | None]:
        """Name and compiler for metadata.json (the version is the runtime's to tell)."""
        compiler = self.compiler(arch, cross_compile=cross_compile)
        return {"name": self.name, "compiler": compiler, "version": None}

    def debian_packages(self, arch: Arch, machine: str | None = None) -> list[str]:
        """Debian packages that provide this toolchain for *arch* (for hints)."""
        d = definitions.load("toolchain", self.family)
        values = self._values(arch, Wrapper.load("none"), machine)
        templates = list(definitions.optional(d, "debian_packages", list, []))
        if values["cross_compile"]:
            # The arch's own list wins: hexagon has no GNU binutils to bring,
            # parisc64's vDSO needs the 32-bit compiler as well.
            cross = definitions.optional(d, "cross_debian_packages", list, [])
            templates += arch.cross_debian_packages.get(self.family, cross)
        extra = definitions.optional(d, "arch_debian_packages", str, "")
        own = list(getattr(arch, extra)) if extra else []  # arm64's compat vDSO compiler
        return [definitions.expand(d, t, values) for t in templates] + own


def known() -> list[str]:
    """Every accepted toolchain name: each family and family-N."""
    names = []
    for family in definitions.available("toolchain"):
        d = definitions.load("toolchain", family)
        names.append(family)
        names += [f"{family}-{v}" for v in definitions.optional(d, "versions", list, [])]
    return names
