"""Reproducible builds by default: what a build sets so that the same
source, toolchain and options give the same bytes, in any runtime and any
build or results directory.

``plan()`` decides once per build: KBUILD_BUILD_TIMESTAMP (the tree's HEAD
commit date, else its Makefile's mtime), KBUILD_BUILD_USER/HOST, a debug
prefix map appended to KCFLAGS/KAFLAGS, TAR_OPTIONS/XZ_OPT that make
tar and xz deterministic, and an arch's own make variables (m68k's
KGZIP='gzip -n'); the values live in data/reproducible.yaml. A user's value
wins over each. No pytest import.
"""

from __future__ import annotations

import datetime
import email.utils
import functools
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..definitions import DATA_DIR
from ..errors import DefinitionError

DATA_FILE = DATA_DIR / "reproducible.yaml"
TIMESTAMP = "KBUILD_BUILD_TIMESTAMP"
# Where a user's value came from, as metadata.json names it.
MAKE_VARIABLES, ENV, ENVIRONMENT = "make_variables", "env", "environment"
FROM_GIT = "default (git HEAD commit date)"
FROM_MTIME = "default (mtime of the tree's Makefile)"
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_FORMATS = ("%a %b %d %H:%M:%S %Z %Y", "%a %b %d %H:%M:%S %Y %z", "%a %b %d %H:%M:%S %z %Y")


@dataclass(frozen=True)
class Defaults:
    """data/reproducible.yaml."""

    variables: Mapping[str, str]
    prefix_map: str
    flag_variables: tuple[str, ...]
    tools: Mapping[str, str]
    arch_makevars: Mapping[str, Mapping[str, str]]


@functools.cache
def defaults() -> Defaults:
    try:
        d = yaml.safe_load(DATA_FILE.read_text())
        return Defaults(
            variables={str(k): str(v) for k, v in d["variables"].items()},
            prefix_map=str(d["prefix_map"]),
            flag_variables=tuple(str(v) for v in d["flag_variables"]),
            tools={str(k): str(v) for k, v in d["tools"].items()},
            arch_makevars={
                str(a): {str(k): str(v) for k, v in mv.items()}
                for a, mv in (d.get("arch_makevars") or {}).items()
            },
        )
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as err:
        raise DefinitionError(str(DATA_FILE), f"unreadable: {err}") from None


@dataclass(frozen=True)
class Plan:
    """What reproducible mode sets for one build (nothing when *enabled* is
    False): *values* the KBUILD_BUILD_* variables with *sources* saying who
    set each, *epoch* the timestamp as seconds (the mtime of every tarball
    entry), *user* the flag and tool variables the user gave (they come
    first, ours are appended), *map_build_dir* whether the prefix map names
    the build dir too (not with a wrapper that hashes it into its key),
    *arch_makevars* the arch's own variables for make's command line (a
    Makefile's plain assignment, as of KGZIP, ignores the environment)."""

    enabled: bool
    values: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    epoch: int | None = None
    user: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    map_build_dir: bool = True
    arch_makevars: Mapping[str, str] = field(default_factory=dict)
    arch: str = ""

    def flags(self, tree: Path, build_dir: Path | None) -> str:
        """The prefix-map flags for *tree* and *build_dir* (longest path
        last: gcc tries the last map first, clang the longest)."""
        dirs = [str(tree)]
        if build_dir is not None and self.map_build_dir:
            dirs.append(str(build_dir))
        template = defaults().prefix_map
        return " ".join(template.format(dir=d) for d in sorted(dirs, key=len))

    def variables(self, tree: Path, build_dir: Path | None) -> dict[str, tuple[str, str]]:
        """name -> (value, where from) of every variable this plan sets."""
        if not self.enabled:
            return {}
        out = {k: (v, self.sources[k]) for k, v in self.values.items()}
        ours = self.flags(tree, build_dir)
        for name in defaults().flag_variables:
            value, where = self.user.get(name, ("", ""))
            out[name] = (f"{value} {ours}".strip(), f"{where} + prefix map" if where else "default")
        for name, template in defaults().tools.items():
            value, where = self.user.get(name, ("", ""))
            if name == "XZ_OPT" and value:
                out[name] = (value, where)
                continue
            mine = template.format(epoch=self.epoch)
            out[name] = (f"{mine} {value}".strip(), f"default + {where}" if where else "default")
        for name, value in self.arch_makevars.items():
            out[name] = (value, f"default for arch {self.arch}")
        return out

    def environment(self, tree: Path, build_dir: Path | None) -> dict[str, str]:
        """Variables for the build's environment (all but those the user
        put on make's command line: makevars() has them)."""
        return {
            k: v
            for k, (v, where) in self.variables(tree, build_dir).items()
            if not where.startswith(MAKE_VARIABLES) and k not in self.arch_makevars
        }

    def makevars(self, tree: Path, build_dir: Path | None) -> dict[str, str]:
        """KCFLAGS/KAFLAGS the user gave as make variables, with our flags
        appended (make's command line beats the environment), and the
        arch's own variables."""
        return {
            k: v
            for k, (v, where) in self.variables(tree, build_dir).items()
            if (where.startswith(MAKE_VARIABLES) and k in defaults().flag_variables)
            or k in self.arch_makevars
        }

    def reproducer_env(self) -> dict[str, str]:
        """What the reproducer must carry: a timestamp taken from the tree's
        Makefile (a copy of the tree may have another mtime; a git tree's
        HEAD gives the same date in every clone)."""
        if self.enabled and self.sources[TIMESTAMP] == FROM_MTIME:
            return {TIMESTAMP: self.values[TIMESTAMP]}
        return {}

    def record(self, tree: Path, build_dir: Path | None) -> dict[str, Any]:
        """metadata.json's ``reproducible``: on or off, each variable set and
        where from, the tarballs' mtime."""
        set_ = self.variables(tree, build_dir)
        return {
            "enabled": self.enabled,
            "variables": {k: v for k, (v, _) in sorted(set_.items())},
            "sources": {k: w for k, (_, w) in sorted(set_.items())},
            "epoch": self.epoch,
        }


def plan(
    tree: Path,
    *,
    enabled: bool,
    make_variables: Mapping[str, str],
    env: Mapping[str, str],
    environment: Mapping[str, str],
    map_build_dir: bool = True,
    arch: str = "",
) -> Plan:
    """The plan of a build of *tree* for *arch* (its name in data/arch/).
    A variable the user set wins; it may come from *make_variables* (make's
    command line), the build's *env* or the *environment* pytest-kbuild runs
    in (passed on to containers too, so every runtime builds alike)."""
    if not enabled:
        return Plan(False)
    d = defaults()

    def given(name: str) -> tuple[str, str] | None:
        for where, values in ((MAKE_VARIABLES, make_variables), (ENV, env)):
            if name in values:
                return values[name], where
        if environment.get(name):
            return environment[name], ENVIRONMENT
        return None

    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    user_ts = given(TIMESTAMP)
    tree_epoch, tree_source = tree_timestamp(tree)
    epoch = tree_epoch
    if user_ts is not None:
        values[TIMESTAMP], sources[TIMESTAMP] = user_ts
        parsed = parse_timestamp(user_ts[0])
        if parsed is not None:
            epoch = parsed
    else:
        values[TIMESTAMP], sources[TIMESTAMP] = format_timestamp(tree_epoch), tree_source
    for name, value in d.variables.items():
        values[name], sources[name] = given(name) or (value, "default")
    user = {n: g for n in (*d.flag_variables, *d.tools) if (g := given(n)) is not None}
    # An arch variable the user set anywhere is theirs alone (not ours on
    # make's command line, which would beat their env).
    mine = {k: v for k, v in d.arch_makevars.get(arch, {}).items() if given(k) is None}
    return Plan(True, values, sources, epoch, user, map_build_dir, mine, arch)


def tree_timestamp(tree: Path) -> tuple[int, str]:
    """Seconds since 1970 for the tree, and where they came from: the
    committer date of HEAD in a git tree (git on this host), else the
    mtime of the top-level Makefile (one stat; kept by tar and git archive)."""
    if (tree / ".git").exists():
        try:
            done = subprocess.run(
                ["git", "-C", str(tree), "log", "-1", "--format=%ct", "HEAD"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            if done.returncode == 0 and done.stdout.strip().isdigit():
                return int(done.stdout.strip()), FROM_GIT
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        return int((tree / "Makefile").stat().st_mtime), FROM_MTIME
    except OSError:
        return 0, "default (1970: no git HEAD and no Makefile to date the tree)"


def format_timestamp(epoch: int) -> str:
    """*epoch* as date(1) prints it in the C locale and UTC
    (``Mon Nov  6 18:15:00 UTC 2023``): what an unset KBUILD_BUILD_TIMESTAMP
    would show in ``uname -v``, and what date -d and tar --mtime parse."""
    t = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    return (
        f"{_DAYS[t.weekday()]} {_MONTHS[t.month - 1]} {t.day:2d} "
        f"{t.hour:02d}:{t.minute:02d}:{t.second:02d} UTC {t.year}"
    )


def parse_timestamp(text: str) -> int | None:
    """Seconds since 1970 for a user's KBUILD_BUILD_TIMESTAMP (@N, date(1)'s
    format, ISO 8601, RFC 2822, else what ``date -d`` makes of it), or None."""
    text = text.strip()
    if text.startswith("@") and text[1:].isdigit():
        return int(text[1:])
    for fmt in _FORMATS:
        try:
            t = datetime.datetime.strptime(text.replace("UTC", "+0000"), fmt.replace("%Z", "%z"))
            return int(t.timestamp())
        except ValueError:
            pass
    try:
        t = datetime.datetime.fromisoformat(text)
        return int((t if t.tzinfo else t.replace(tzinfo=datetime.timezone.utc)).timestamp())
    except ValueError:
        pass
    try:
        return int(email.utils.parsedate_to_datetime(text).timestamp())
    except (TypeError, ValueError, IndexError):
        pass
    try:
        done = subprocess.run(
            ["date", "-u", "-d", text, "+%s"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            env={"LC_ALL": "C", "TZ": "UTC"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = done.stdout.strip()
    return int(out) if done.returncode == 0 and out.lstrip("-").isdigit() else None
