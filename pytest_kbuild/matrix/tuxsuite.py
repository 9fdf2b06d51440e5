"""data/tuxsuite.yaml: the names a TuxSuite plan may use (arches, TuxMake
targets, toolchains, test devices) and how pytest-kbuild builds them. Read
by plan.py. No pytest import."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..definitions import DATA_DIR
from ..errors import DefinitionError

RULES_FILE = DATA_DIR / "tuxsuite.yaml"


@dataclass(frozen=True)
class ToolchainRule:
    """One entry of data/tuxsuite.yaml's toolchains."""

    match: re.Pattern[str]
    runs_on: str = ""
    note: str = ""
    skip: str = ""


@dataclass(frozen=True)
class Rules:
    """data/tuxsuite.yaml: the names TuxSuite accepts and how they build here."""

    arches: frozenset[str]
    targets: frozenset[str]
    toolchains: tuple[ToolchainRule, ...]
    devices: Mapping[str, str]


@functools.cache
def rules(path: Path = RULES_FILE) -> Rules:
    """The rules of *path* (data/tuxsuite.yaml), loaded once."""
    try:
        d = yaml.safe_load(path.read_text(encoding="utf-8"))
        tools = tuple(
            ToolchainRule(
                re.compile(t["match"]),
                str(t.get("runs_on", "")),
                str(t.get("note", "")),
                str(t.get("skip", "")),
            )
            for t in d["toolchains"]
        )
        return Rules(
            frozenset(d["arches"]),
            frozenset(d["targets"]),
            tools,
            {str(k): str(v) for k, v in d["devices"].items()},
        )
    except (OSError, yaml.YAMLError, KeyError, TypeError, re.error) as err:
        raise DefinitionError(str(path), f"not a valid TuxSuite rules file: {err}") from None
