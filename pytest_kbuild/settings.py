"""One run's settings: each option's value from where it was given, CLI >
PYTEST_KBUILD_* environment > ini > default (a parser gets where a value
came from), relative paths made absolute, the Settings an xdist worker
gets on the wire. The options themselves are declared in options.py.
No pytest import.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import KbuildUserError
from .options import (
    BUILD_OPTIONS,
    BY_NAME,
    RUN_OPTIONS,
    BuildOptions,
    IniType,
    Option,
    RunOptions,
    plain,
)

# What each ini type accepts, for the message of a value pytest rejects.
INI_ACCEPTED: Mapping[IniType, str] = {
    "args": "a list (a TOML array, or values separated by spaces, lines or os.pathsep)",
    "bool": "true/false, yes/no, on/off, 1/0",
    "string": "one value, a string",
}


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
        return _from_ini(option, ini), "ini"
    return option.default, "default"


def _from_ini(option: Option, ini: Any) -> Any:
    """*ini* as pytest returns it for ``option.ini_type``: a list (a TOML
    array, or an ini value split as in a shell), a bool, or a string."""
    if option.multiple:
        items = ini.split() if isinstance(ini, str) else ini
        return [option.parse(v, option.ini) for i in items for v in str(i).split(os.pathsep) if v]
    if isinstance(ini, list):  # a TOML array where one value is accepted
        raise KbuildUserError(
            f"{option.ini}: {ini!r} is a list; accepted: {INI_ACCEPTED[option.ini_type]}"
        )
    return option.parse(str(ini), option.ini)


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one pytest run, and where each came from."""

    run: RunOptions
    build: BuildOptions
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def where(self, name: str) -> str:
        """The option, env variable or ini key that set *name*."""
        return where(BY_NAME[name], self.sources.get(name, "cli"))


def build_settings(
    raw: Mapping[str, tuple[Any, str]], invocation_dir: Path, ini_dir: Path
) -> Settings:
    """Settings from resolved (value, source) pairs; relative paths are taken
    from the invocation directory (CLI, env) or the ini file's directory."""

    def value(opt: Option) -> Any:
        v, source = raw.get(opt.name, (opt.default, "default"))
        if not opt.path or v is None:
            return tuple(v) if opt.multiple else v
        base = ini_dir if source == "ini" else invocation_dir
        paths = [(base / p).resolve() for p in (v if opt.multiple else [v])]
        return tuple(paths) if opt.multiple else paths[0]

    run = RunOptions(**{o.name: value(o) for o in RUN_OPTIONS})
    for m in run.matrix:
        if not m.is_file():
            source = where(BY_NAME["matrix"], raw.get("matrix", ((), "cli"))[1])
            raise KbuildUserError(f"{source}: matrix file {str(m)!r} does not exist")
    build = BuildOptions(**{o.name: value(o) for o in BUILD_OPTIONS})
    settings = Settings(run, build, {name: source for name, (_, source) in raw.items()})
    _check_baseline(settings)
    return settings


def _check_baseline(settings: Settings) -> None:
    """A bad --kbuild-baseline is bad input of the run, found before any build.
    Only what the settings say; reading the baseline is the plugin's
    (plugin/state.py::check_baseline, right after build_settings)."""
    base, fail_on = settings.build.baseline, settings.build.fail_on
    if base is None:
        if fail_on == "new-warnings":
            raise KbuildUserError(
                f"{settings.where('fail_on')}: new-warnings needs a baseline to tell what is "
                f"new; give {BY_NAME['baseline'].cli}=DIR (the results of an earlier run)"
            )
        return
    if base in (settings.run.results, settings.run.results / "results.json"):
        raise KbuildUserError(
            f"{settings.where('baseline')}: {str(base)!r} is this run's results dir; "
            "accepted: the results of an earlier run, kept elsewhere"
        )


def to_wire(settings: Settings) -> dict[str, Any]:
    """*settings* as plain data for an xdist worker (``workerinput``): paths
    absolute, as the controller resolved them."""
    return {
        "run": plain(settings.run),
        "build": plain(settings.build),
        "sources": dict(settings.sources),
    }


def from_wire(data: Mapping[str, Any]) -> Settings:
    """The Settings that to_wire() turned into *data*."""
    run = RunOptions(**_decode(RUN_OPTIONS, data["run"]))
    build = BuildOptions(**_decode(BUILD_OPTIONS, data["build"]))
    return Settings(run, build, dict(data["sources"]))


def _decode(options: Iterable[Option], data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for o in options:
        v = data[o.name]
        if o.decode is not None:
            v = o.decode(v)
        elif o.path and v is not None:
            v = tuple(Path(p) for p in v) if o.multiple else Path(v)
        elif o.multiple:
            v = tuple(v)
        out[o.name] = v
    return out
