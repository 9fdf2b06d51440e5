"""Run-wide settings: CLI > PYTEST_KBUILD_* environment > ini > default.

No pytest import: plugin.py registers the options described here and hands
the raw values to resolve(); validators get where a value came from.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import jobserver as jobservers
from . import shard as shards
from .errors import KbuildUserError
from .runtime.container import NETWORKS, PULL_POLICIES, image_reference
from .toolchain import redact

ENV_PREFIX = "PYTEST_KBUILD_"


@dataclass(frozen=True)
class Option:
    """One setting: --kbuild-<name>, PYTEST_KBUILD_<NAME>, ini kbuild_<name>."""

    name: str
    help: str
    parse: Callable[[str, str], Any]
    default: Any = None
    flag: bool = False
    multiple: bool = False

    @property
    def cli(self) -> str:
        return "--kbuild-" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def ini(self) -> str:
        return "kbuild_" + self.name


def _text(value: str, where: str) -> str:
    if not value.strip():
        raise KbuildUserError(f"{where}: empty value")
    return value.strip()


def _positive_int(value: str, where: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise KbuildUserError(f"{where}: {value!r} is not a positive whole number")
    return n


def _url(value: str, where: str) -> str:
    url = _text(value, where)
    scheme, sep, rest = url.partition("://")
    if not (sep and scheme and rest):
        raise KbuildUserError(f"{where}: {redact(url)!r} is not a URL like redis://HOST:PORT")
    return url


def _bool(value: str, where: str) -> bool:
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off", ""):
        return False
    raise KbuildUserError(
        f"{where}: {value!r} is not a boolean; accepted: 1/0, true/false, yes/no, on/off"
    )


def _choice(what: str, accepted: tuple[str, ...]) -> Callable[[str, str], str]:
    def parse(value: str, where: str) -> str:
        if value not in accepted:
            raise KbuildUserError(
                f"{where}: {what} {value!r} is not known; accepted: {', '.join(accepted)}"
            )
        return value

    return parse


def _image(value: str, where: str) -> str:
    try:
        image_reference(value, "x86_64", "gcc")
    except KbuildUserError as err:
        raise KbuildUserError(f"{where}: {err}") from None
    return value


OPTIONS = (
    Option(
        "matrix",
        "matrix YAML file(s) to build; repeat or separate with os.pathsep",
        _text,
        multiple=True,
    ),
    Option(
        "tree",
        "kernel source tree (overrides the matrix's tree:; default: current directory)",
        _text,
    ),
    Option(
        "results",
        "results directory for logs, artifacts and metadata.json",
        _text,
        "kbuild-results",
    ),
    Option(
        "build_dir",
        "directory for build objects (one subdirectory per build; default: temporary)",
        _text,
    ),
    Option("keep_build_dir", "keep build objects after each build", _bool, False, flag=True),
    Option(
        "jobs",
        "make -j per build, without a jobserver (default: CPUs divided among xdist workers)",
        _positive_int,
    ),
    Option(
        "jobserver",
        "one GNU make jobserver shared by all builds: auto (on with several xdist workers "
        "and no --kbuild-jobs), on (one slot per CPU), off, or a number of slots",
        jobservers.parse_mode,
        "auto",
    ),
    Option(
        "runtime",
        "runtime for every build, overriding the matrix: local, podman or docker",
        _text,
    ),
    Option(
        "image",
        "container image for podman/docker builds; {arch} and {toolchain} are filled in "
        "(default: localhost/kbuild/{arch}_{toolchain}); a name@sha256:... pins one image",
        _image,
    ),
    Option(
        "pull",
        "when to pull container images: missing (default), always or never",
        _choice("pull", PULL_POLICIES),
        "missing",
    ),
    Option(
        "network",
        "network of container build steps: none (default), host or default",
        _choice("network", NETWORKS),
        "none",
    ),
    Option(
        "fail_fast",
        "stop a build at its first failing target (no --keep-going)",
        _bool,
        False,
        flag=True,
    ),
    Option("cache_dir", "compiler cache directory for the ccache/sccache wrappers", _text),
    Option(
        "cache_remote",
        "remote storage shared by the ccache/sccache wrappers of every machine "
        "(redis://HOST:PORT; ccache also http://..., file://...)",
        _url,
    ),
    Option(
        "shard",
        "build only shard I of N (I/N, from 1) of the matrices' builds; default: from "
        f"{shards.GITLAB_INDEX}/{shards.GITLAB_TOTAL} or {shards.K8S_INDEX}/{shards.K8S_TOTAL}",
        shards.parse,
    ),
    Option(
        "durations",
        "JSON file of build durations for --kbuild-shard: a results.json of an earlier run "
        'or {"<matrix>::<build id>": seconds}; default: estimates',
        _text,
    ),
)
BY_NAME = {o.name: o for o in OPTIONS}


def where(option: Option, source: str) -> str:
    """The option, variable or ini key a value of *option* came from."""
    return {"cli": option.cli, "env": option.env, "ini": option.ini}.get(source, option.cli)


def resolve(option: Option, cli: Any, env: Mapping[str, str], ini: Any) -> tuple[Any, str]:
    """The value of *option* and where it came from (for relative paths)."""
    if cli not in (None, [], False):
        if option.multiple:
            return [option.parse(v, option.cli) for v in cli], "cli"
        return (True if option.flag else option.parse(str(cli), option.cli)), "cli"
    if env.get(option.env, "") != "":
        raw = env[option.env]
        if option.multiple:
            return [option.parse(v, option.env) for v in raw.split(os.pathsep) if v], "env"
        return option.parse(raw, option.env), "env"
    if ini not in (None, "", []):
        if option.multiple:
            return [option.parse(v, option.ini) for v in str(ini).split()], "ini"
        return option.parse(str(ini), option.ini), "ini"
    return option.default, "default"


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one pytest run."""

    matrices: tuple[Path, ...]
    tree: Path | None
    results: Path
    build_dir: Path | None
    keep_build_dir: bool
    jobs: int | None
    jobserver: str | int
    runtime: str | None
    image: str | None
    pull: str
    network: str
    fail_fast: bool
    cache_dir: Path | None
    cache_remote: str | None
    shard: shards.Shard | None
    durations: Path | None


def build_settings(
    raw: Mapping[str, tuple[Any, str]], invocation_dir: Path, ini_dir: Path
) -> Settings:
    """Settings from resolved (value, source) pairs; relative paths are taken
    from the invocation directory (CLI, env) or the ini file's directory."""

    def path(name: str) -> Path | None:
        value, source = raw[name]
        if value is None:
            return None
        base = ini_dir if source == "ini" else invocation_dir
        return (base / value).resolve() if not Path(value).is_absolute() else Path(value)

    matrices_value, source = raw["matrix"]
    base = ini_dir if source == "ini" else invocation_dir
    matrices = tuple((base / m).resolve() for m in (matrices_value or []))
    for m in matrices:
        if not m.is_file():
            raise KbuildUserError(
                f"{where(BY_NAME['matrix'], source)}: matrix file {str(m)!r} does not exist"
            )
    results = path("results")
    assert results is not None
    return Settings(
        matrices=matrices,
        tree=path("tree"),
        results=results,
        build_dir=path("build_dir"),
        keep_build_dir=bool(raw["keep_build_dir"][0]),
        jobs=raw["jobs"][0],
        jobserver=raw["jobserver"][0],
        runtime=raw["runtime"][0],
        image=raw["image"][0],
        pull=raw["pull"][0],
        network=raw["network"][0],
        fail_fast=bool(raw["fail_fast"][0]),
        cache_dir=path("cache_dir"),
        cache_remote=raw["cache_remote"][0],
        shard=raw["shard"][0],
        durations=path("durations"),
    )


def to_wire(settings: Settings) -> dict[str, Any]:
    """*settings* as plain data for an xdist worker (``workerinput``): paths
    absolute, as the controller resolved them."""
    return {
        "matrices": [str(m) for m in settings.matrices],
        "tree": _str(settings.tree),
        "results": str(settings.results),
        "build_dir": _str(settings.build_dir),
        "keep_build_dir": settings.keep_build_dir,
        "jobs": settings.jobs,
        "runtime": settings.runtime,
        "image": settings.image,
        "pull": settings.pull,
        "network": settings.network,
        "cache_remote": settings.cache_remote,
        "jobserver": settings.jobserver,
        "fail_fast": settings.fail_fast,
        "cache_dir": _str(settings.cache_dir),
        "shard": str(settings.shard) if settings.shard else None,
        "durations": _str(settings.durations),
    }


def from_wire(data: Mapping[str, Any]) -> Settings:
    """The Settings that to_wire() turned into *data*."""

    def path(key: str) -> Path | None:
        return Path(data[key]) if data[key] is not None else None

    return Settings(
        matrices=tuple(Path(m) for m in data["matrices"]),
        tree=path("tree"),
        results=Path(data["results"]),
        build_dir=path("build_dir"),
        keep_build_dir=bool(data["keep_build_dir"]),
        jobs=data["jobs"],
        runtime=data["runtime"],
        image=data["image"],
        pull=data["pull"],
        network=data["network"],
        cache_remote=data["cache_remote"],
        jobserver=data["jobserver"],
        fail_fast=bool(data["fail_fast"]),
        cache_dir=path("cache_dir"),
        shard=shards.parse(data["shard"], "workerinput") if data["shard"] else None,
        durations=path("durations"),
    )


def _str(path: Path | None) -> str | None:
    return str(path) if path is not None else None
