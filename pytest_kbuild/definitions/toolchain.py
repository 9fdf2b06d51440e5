"""Toolchains (gcc, gcc-N, clang, clang-N, and llvm@DIR / gcc@DIR from a
directory) and compiler wrappers, from data/."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import definitions
from ..errors import (
    DefinitionError,
    KbuildUserError,
    ToolchainDirError,
    UnknownDefinition,
    UnknownToolchain,
    UnknownWrapper,
)
from ..parsers import redact as redact  # moved down; build/ imports it from here
from . import tooldir
from .arch import Arch

_NAME = re.compile(r"^(?P<family>[a-z]+)(?:-(?P<version>\d+))?$")
# The name part of NAME@DIR: a directory family (llvm, gcc), alone or with
# a path-safe suffix of the user's (llvm-21, gcc-14-korg).
_DIR_NAME = re.compile(r"^(?P<family>[a-z]+)(?:-[A-Za-z0-9_.+-]*[A-Za-z0-9_.+])?$")


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
    """A compiler family at an optional version, e.g. clang-16 or gcc; or
    one from a directory (``llvm@/opt/llvm-21/bin``): then *directory* is
    its absolute path, *release* the version its compiler reports, and
    *name* the id part (``llvm-21``: the family and the major version,
    unless the user named it)."""

    name: str
    family: str
    version: str
    directory: str = ""
    release: str = ""

    @classmethod
    def load(cls, name: str, where: str = "", base_dir: Path | None = None) -> Toolchain:
        """Parse and validate *name* (``gcc``, ``gcc-12``, ``clang-16``,
        ``llvm@DIR``, ``gcc-14@DIR``...); a relative DIR is relative to
        *base_dir* (default: the current directory)."""
        if "@" in name:
            return _from_directory(name, where, base_dir)
        m = _NAME.match(name)
        family = m.group("family") if m else ""
        version = str(int(m.group("version"))) if m and m.group("version") else ""
        if not m or definitions.canonical("toolchain", family) is None:
            raise UnknownToolchain(name, known(), where, _directory_hint())
        d = definitions.load("toolchain", family)
        versions = definitions.optional(d, "versions", list, [])
        if version and int(version) not in versions:
            hint = (
                f"{d.name}-N is Debian's package for N in {min(versions)}..{max(versions)}; "
                f"for another, give its directory: {_directory_hint()}"
            )
            raise UnknownToolchain(name, known(), where, hint)
        return cls(f"{d.name}-{version}" if version else d.name, d.name, version)

    @property
    def spec_name(self) -> str:
        """How a BuildSpec (and so the reproducer) names it: ``gcc-12``,
        ``llvm-21@/opt/llvm-21/bin``."""
        return f"{self.name}@{self.directory}" if self.directory else self.name

    @property
    def image_toolchain(self) -> str:
        """The toolchain whose container image builds with it: itself, or
        for a directory its family's (the directory is mounted into it)."""
        return self.family if self.directory else self.name

    def _definition(self) -> tuple[definitions.Definition, Mapping[str, Any]]:
        """Its data file, and the fields that say how it builds: the file's
        own, or its ``directory:`` section for a toolchain from a directory."""
        d = definitions.load("toolchain", self.family)
        return d, (_directory_section(d) if self.directory else d.fields)

    def _values(
        self, arch: Arch, wrapper: Wrapper, machine: str | None, cross_compile: str | None = None
    ) -> dict[str, str]:
        suffix = f"-{self.version}" if self.version else ""
        cross = arch.cross_compile_for(machine) if cross_compile is None else cross_compile
        cc = f"{cross}gcc{suffix}"
        if self.directory and cross_compile is None and self._finds_prefix():
            # The first compiler of the directory that builds the arch (the
            # first looked for when none does: the tool check names them all).
            options = self.candidates(arch, machine)
            cc = next((c for c in options if tooldir.executable(c)), options[0])
            if os.path.basename(cc) != "gcc":  # DIR/<prefix>gcc: CROSS_COMPILE=DIR/<prefix>
                cross = cc[: -len("gcc")]
        return {
            "cross_compile": cross,
            "version": self.version,
            "version_suffix": suffix,
            "llvm": suffix or "1",
            "wrapper": f"{wrapper.command} " if wrapper.command else "",
            "triplet": cross.rstrip("-"),
            # Debian package names cannot hold "_": gcc-x86-64-linux-gnu.
            "debian_triplet": cross.rstrip("-").replace("_", "-"),
            "dir": self.directory,
            "cc": cc,
        }

    def _finds_prefix(self) -> bool:
        _, fields = self._definition()
        return bool(fields.get("find_prefix", False))

    def candidates(self, arch: Arch, machine: str | None = None) -> list[str]:
        """For a gcc directory: the compilers that would build *arch*, in the
        order they are looked for (a plain DIR/gcc on the native arch, then
        DIR/<prefix>gcc for each of the arch's prefixes); [] otherwise."""
        if not self.directory or not self._finds_prefix():
            return []
        plain = [os.path.join(self.directory, "gcc")] if arch.is_native(machine) else []
        return plain + [os.path.join(self.directory, f"{p}gcc") for p in arch.cross_prefixes()]

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
        d, fields = self._definition()
        values = self._values(arch, wrapper, machine, cross_compile)
        out = dict(arch.makevars)
        if values["cross_compile"] or cross_compile is not None:
            out["CROSS_COMPILE"] = values["cross_compile"]
        templates = fields.get("makevars")
        if not isinstance(templates, dict):
            raise DefinitionError(str(d.path), f"{self.name}: 'makevars' must be a mapping")
        for key, template in templates.items():
            out[str(key)] = definitions.expand(d, str(template), values)
        extra = fields.get("arch_makevars", "")
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
        d, fields = self._definition()
        values = self._values(arch, Wrapper.load("none"), machine, cross_compile)
        template = fields.get("compiler")
        if not isinstance(template, str):
            raise DefinitionError(str(d.path), f"{self.name}: 'compiler' must be a string")
        return definitions.expand(d, template, values)

    def min_tool(self) -> str:
        """The tool name the tree's scripts/min-tool-version.sh takes for it ("" if none)."""
        d = definitions.load("toolchain", self.family)
        return str(definitions.optional(d, "min_tool", str, ""))

    def describe(self, arch: Arch, cross_compile: str | None = None) -> dict[str, str | None]:
        """Name, compiler and directory for metadata.json (the version, its
        number and the tree's minimum are the runtime's to tell)."""
        compiler = self.compiler(arch, cross_compile=cross_compile)
        return {
            "name": self.name,
            "compiler": compiler,
            "path": self.directory or None,
            "version": None,
            "version_number": None,
            "minimum_version": None,
        }

    def debian_packages(self, arch: Arch, machine: str | None = None) -> list[str]:
        """Debian packages that provide this toolchain for *arch* (for hints);
        none for one from a directory."""
        if self.directory:
            return []
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


def id_name(spec_name: str) -> str:
    """The build id part of a BuildSpec's toolchain: ``llvm-21@DIR`` -> ``llvm-21``."""
    return spec_name.partition("@")[0]


def directory_families() -> dict[str, str]:
    """The NAME of NAME@DIR -> the family data file that builds with it
    (``llvm`` -> ``clang``): each family whose file has a directory: section."""
    out = {}
    for family in definitions.available("toolchain"):
        d = definitions.load("toolchain", family)
        if "directory" in d.fields:
            out[str(_directory_section(d)["name"])] = family
    return out


def _directory_hint() -> str:
    forms = " or ".join(f"{n}@DIR" for n in sorted(directory_families()))
    return f"a toolchain from a directory is {forms} (e.g. llvm@/opt/llvm-21/bin)"


def _directory_section(d: definitions.Definition) -> Mapping[str, Any]:
    section: Mapping[str, Any] = definitions.require(d, "directory", dict)
    for key, typ in (("name", str), ("compilers", list), ("version_args", list)):
        if not isinstance(section.get(key), typ):
            raise DefinitionError(str(d.path), f"directory: needs {key!r} ({typ.__name__})")
    return section


def _from_directory(text: str, where: str, base_dir: Path | None) -> Toolchain:
    head, _, path = text.partition("@")
    m = _DIR_NAME.match(head)
    families = directory_families()
    if m is None or m.group("family") not in families or not path or "\0" in path:
        raise UnknownToolchain(text, known(), where, _directory_hint())
    directory = os.path.normpath(os.path.join(base_dir or os.getcwd(), path))
    return _load_directory(text, head, families[m.group("family")], directory, where)


@cache
def _load_directory(text: str, head: str, family: str, directory: str, where: str) -> Toolchain:
    d = definitions.load("toolchain", family)
    section = _directory_section(d)
    patterns = [str(p) for p in section["compilers"]]
    if not os.path.isdir(directory):
        problem = (
            f"{directory} is not a directory; {section['name']}@DIR names a directory "
            f"holding {' or '.join(patterns)}"
        )
        raise ToolchainDirError(text, directory, problem, where)
    found = tooldir.find(directory, patterns)
    if found is None:
        expected = " or ".join(os.path.join(directory, p) for p in patterns)
        problem = f"{directory} holds no {section['name']} compiler: expected {expected}"
        raise ToolchainDirError(text, directory, problem, where)
    release, why = tooldir.probe(found, tuple(str(a) for a in section["version_args"]))
    if release is None:
        raise ToolchainDirError(text, directory, f"its compiler does not work: {why}", where)
    name = head if head != section["name"] else f"{head}-{release.split('.')[0]}"
    return Toolchain(name, d.name, "", directory, release)


def known() -> list[str]:
    """Every accepted toolchain name: each family and family-N."""
    names = []
    for family in definitions.available("toolchain"):
        d = definitions.load("toolchain", family)
        names.append(family)
        names += [f"{family}-{v}" for v in definitions.optional(d, "versions", list, [])]
    return names
