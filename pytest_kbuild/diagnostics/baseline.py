"""What is new: a build's diagnostics compared with the same build of an
earlier run (the baseline, e.g. the target branch's CI artifacts).

A baseline is a results dir (of pytest, or kbuild's output dir), or the
results.json inside one: each build's metadata.json holds its diagnostics.
Diagnostics match on `Diagnostic.key` (file, kind, flag and the message
with numbers and quoted names blanked),
never on line numbers, so a warning that only moved is unchanged. A build
(or a target) the baseline did not build is *absent*, which is not the same
as everything being new. No pytest import: build.py applies it, so
``kbuild --baseline`` and the Python API compare as pytest does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import diagnostics
from ..errors import BadBaseline
from ..results import METADATA, METADATA_SCHEMA, SUMMARY, SUMMARY_SCHEMAS_READ
from . import Kind

MAX_FIXED = 50  # fixed diagnostics listed per target (all are counted)
NEW_MARK = ">>"  # as the kernel test robot marks what a patch introduced


@dataclass(frozen=True)
class BaselineTarget:
    status: str
    keys: Mapping[str, Mapping[str, Any]]  # Diagnostic.key -> its record


@dataclass(frozen=True)
class BaselineBuild:
    targets: Mapping[str, BaselineTarget]

    @property
    def keys(self) -> set[str]:
        return {k for t in self.targets.values() for k in t.keys}


@dataclass(frozen=True)
class Baseline:
    """The builds of an earlier run, by build id."""

    path: Path
    builds: Mapping[str, BaselineBuild] = field(default_factory=dict)

    def compare(
        self,
        build_id: str,
        target: str,
        diagnostics: Iterable[MutableMapping[str, Any]],
        earlier: Iterable[str] = (),
    ) -> dict[str, Any]:
        """Mark each of *diagnostics* (``Diagnostic.to_json()`` dicts of one
        target) ``new`` or not and return the target's ``baseline`` entry:
        new/fixed/unchanged counts and the fixed diagnostics. *earlier*: the
        keys of this build's targets that ran before (a diagnostic that moved
        from one target to another is not fixed)."""
        diags = list(diagnostics)
        build = self.builds.get(build_id)
        base = build.targets.get(target) if build else None
        if build is None or base is None or base.status == "SKIP":
            for d in diags:
                d["new"] = False
            what = "build" if build is None else "target"
            return {"path": str(self.path), "absent": what}
        everywhere = build.keys
        current = {str(d["key"]) for d in diags}
        for d in diags:
            d["new"] = d["key"] not in everywhere and not about_the_run(d)
        gone = current | set(earlier)
        fixed = [r for k, r in base.keys.items() if k not in gone and not about_the_run(r)]
        new = [d for d in diags if d["new"]]
        return {
            "path": str(self.path),
            "absent": None,
            "status": base.status,
            "new": len(new),
            "new_warnings": sum(d["kind"] == Kind.WARNING.value for d in new),
            "new_errors": sum(d["kind"] == Kind.ERROR.value for d in new),
            "fixed": len(fixed),
            "unchanged": len(diags) - len(new),
            "fixed_diagnostics": [_short(rec) for rec in fixed[:MAX_FIXED]],
        }


def about_the_run(d: Mapping[str, Any]) -> bool:
    """A record about how the build ran (`diagnostics.about_the_run`): never
    new nor fixed."""
    return diagnostics.about_the_run(str(d.get("tool", "")), str(d.get("message", "")))


def _short(record: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("kind", "tool", "file", "line", "message", "flag", "key")
    return {k: record.get(k) for k in keep}


def load(path: str | os.PathLike[str], where: str = "baseline") -> Baseline:
    """The baseline at *path* (a results dir or its results.json); read once
    per process. Raises BadBaseline naming the path and what is accepted."""
    return _load(Path(path).resolve(), where)


@lru_cache(maxsize=4)
def _load(path: Path, where: str) -> Baseline:
    if path.is_file():
        if path.name != SUMMARY:
            raise BadBaseline(where, str(path), "is a file but not a results.json")
        _check_summary(path, where)
        folder = path.parent
    elif path.is_dir():
        folder = path
        if (folder / SUMMARY).is_file():
            _check_summary(folder / SUMMARY, where)
    else:
        raise BadBaseline(where, str(path), "does not exist")
    # A pytest run's <matrix>/<build id>/, kbuild's <build id>/ or -o DIR itself.
    found = sorted(folder.glob(f"[!.]*/[!.]*/{METADATA}")) + sorted(
        folder.glob(f"[!.]*/{METADATA}")
    )
    if (folder / METADATA).is_file():
        found.append(folder / METADATA)
    if not found:
        raise BadBaseline(where, str(path), f"has no <matrix>/<build id>/{METADATA} inside")
    builds: dict[str, BaselineBuild] = {}
    for meta in found:
        data = _read_json(meta, where)
        if not isinstance(data, dict) or not isinstance(data.get("targets"), dict):
            raise BadBaseline(where, str(meta), "is not a build's metadata.json")
        if data.get("schema") != METADATA_SCHEMA:
            raise BadBaseline(
                where,
                str(meta),
                f"has schema {data.get('schema')!r}; this version reads schema {METADATA_SCHEMA}",
            )
        targets = {
            str(name): BaselineTarget(
                status=str(entry.get("status", "")),
                keys={str(d["key"]): d for d in entry.get("diagnostics") or () if "key" in d},
            )
            for name, entry in data["targets"].items()
            if isinstance(entry, dict)
        }
        builds[str(data.get("build_id") or meta.parent.name)] = BaselineBuild(targets)
    return Baseline(path, builds)


def _check_summary(path: Path, where: str) -> None:
    data = _read_json(path, where)
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema not in SUMMARY_SCHEMAS_READ:
        accepted = ", ".join(map(str, SUMMARY_SCHEMAS_READ))
        raise BadBaseline(
            where, str(path), f"has schema {schema!r}; this version reads schema {accepted}"
        )


def _read_json(path: Path, where: str) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise BadBaseline(where, str(path), f"cannot be read as JSON ({err})") from None


def marked(headline: str, new: bool | None) -> str:
    """*headline* as the failure text and terminal show it: ``>> `` before a
    new diagnostic, spaces before the others (aligned)."""
    if new is None:
        return headline
    return f"{NEW_MARK} {headline}" if new else f"   {headline}"
