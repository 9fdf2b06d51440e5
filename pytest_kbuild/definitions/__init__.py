"""Find, load and list the definition files under data/<kind>/<name>.yaml.

One loader does lookup, aliases, caching and listing for every kind (arch,
toolchain, target, wrapper), so a new arch or toolchain is a new data file.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import DefinitionError, UnknownDefinition

DATA_DIR = Path(__file__).parent.parent / "data"
KINDS = ("arch", "toolchain", "target", "wrapper", "image", "boot")


@dataclass(frozen=True)
class Definition:
    """One data file: its canonical name, path and fields (aliases removed)."""

    kind: str
    name: str
    path: Path
    fields: Mapping[str, Any]


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise UnknownDefinition("definition kind", kind, KINDS)


@functools.cache
def _index(kind: str) -> tuple[dict[str, Definition], dict[str, str]]:
    """All definitions of *kind* by name, and alias -> name."""
    _check_kind(kind)
    defs: dict[str, Definition] = {}
    aliases: dict[str, str] = {}
    for path in sorted((DATA_DIR / kind).glob("*.yaml")):
        try:
            fields = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as err:
            raise DefinitionError(str(path), f"invalid YAML: {err}") from None
        if not isinstance(fields, dict):
            raise DefinitionError(str(path), "top level must be a mapping")
        fields = dict(fields)
        alias_list = fields.pop("aliases", []) or []
        if not isinstance(alias_list, list) or not all(isinstance(a, str) for a in alias_list):
            raise DefinitionError(str(path), "'aliases' must be a list of strings")
        name = path.stem
        defs[name] = Definition(kind, name, path, fields)
        for alias in alias_list:
            if alias in aliases:
                raise DefinitionError(str(path), f"alias {alias!r} is defined twice")
            aliases[alias] = name
    for alias, name in aliases.items():
        if alias in defs:
            raise DefinitionError(str(defs[name].path), f"alias {alias!r} is also a {kind} name")
    return defs, aliases


def available(kind: str) -> list[str]:
    """Canonical names of every definition of *kind*, sorted."""
    return sorted(_index(kind)[0])


def aliases(kind: str) -> Mapping[str, str]:
    """alias -> canonical name for *kind*."""
    return dict(_index(kind)[1])


def canonical(kind: str, name: str) -> str | None:
    """The canonical name for *name* (itself or an alias), or None."""
    defs, alias_map = _index(kind)
    if name in defs:
        return name
    return alias_map.get(name)


def load(kind: str, name: str, where: str = "") -> Definition:
    """The definition called *name* (or an alias of it); raises UnknownDefinition."""
    defs, alias_map = _index(kind)
    found = canonical(kind, name)
    if found is None:
        raise UnknownDefinition(kind, name, list(defs) + list(alias_map), where)
    return defs[found]


def require(d: Definition, key: str, typ: type | tuple[type, ...]) -> Any:
    """d.fields[key], checked to be of *typ*; a DefinitionError names file and key."""
    if key not in d.fields:
        raise DefinitionError(str(d.path), f"missing key {key!r}")
    value = d.fields[key]
    if not isinstance(value, typ) or (isinstance(value, bool) and typ is int):
        names = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise DefinitionError(str(d.path), f"key {key!r} must be {names}, got {value!r}")
    return value


def optional(d: Definition, key: str, typ: type | tuple[type, ...], default: Any) -> Any:
    """Like require(), with *default* when the key is absent."""
    if key not in d.fields:
        return default
    return require(d, key, typ)


def expand(d: Definition, template: str, values: Mapping[str, str]) -> str:
    """*template* with {placeholders} from *values*; a DefinitionError names a bad one."""
    try:
        return template.format_map(values)
    except KeyError as err:
        accepted = ", ".join(sorted(values))
        raise DefinitionError(
            str(d.path), f"unknown placeholder {{{err.args[0]}}} in {template!r}; known: {accepted}"
        ) from None
    except (ValueError, IndexError, AttributeError) as err:
        raise DefinitionError(str(d.path), f"bad template {template!r}: {err}") from None
