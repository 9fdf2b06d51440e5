"""Identical diagnostics over all builds of a run, each distinct problem once.

Reads the builds' metadata.json files under a results dir, so it works the
same for a run's own dir, a merged one and builds that remote workers sent
home. No pytest import: plugin/reporting.py, merge.py and cli/commands.py use it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, Kind
from ..errors import NotAResultsDir
from ..results import METADATA, SUMMARY, write_json

DIAGNOSTICS = "diagnostics.json"
SCHEMA = 1
MAX_LINES = 10
MAX_WIDTH = 160


def read_builds(
    results_dir: Path, only: Collection[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Each ``<matrix>/<build>/`` of *results_dir*'s metadata.json, by the
    build's name (`results.names`: its build id, or ``<matrix stem>/<build
    id>`` when the builds come from several matrices); with *only*, of the
    builds of those names (this run's, not an earlier run's in the same dir)."""
    return {i: data for i, (_, data) in read_build_folders(results_dir, only).items()}


def read_build_folders(
    results_dir: Path, only: Collection[str] | None = None
) -> dict[str, tuple[Path, dict[str, Any]]]:
    """As `read_builds`, with the folder each metadata.json is in."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise NotAResultsDir(str(results_dir), "is not a directory")
    found = sorted(results_dir.glob(f"[!.]*/[!.]*/{METADATA}"))
    if not found and not (results_dir / SUMMARY).is_file():
        raise NotAResultsDir(str(results_dir), f"has no {SUMMARY} and no build folders")
    read: list[tuple[str, str, Path, dict[str, Any]]] = []  # (matrix stem, build id, ...)
    for path in found:
        stem, folder_id = path.parent.parent.name, path.parent.name
        if only is not None and folder_id not in only and f"{stem}/{folder_id}" not in only:
            continue  # a build of an earlier run into the same dir
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise NotAResultsDir(str(path), f"cannot be read as JSON: {err}") from None
        if isinstance(data, dict) and isinstance(data.get("targets"), dict):
            read.append((stem, str(data.get("build_id") or folder_id), path.parent, data))
    several = len({stem for stem, *_ in read}) > 1
    return {
        (f"{stem}/{build_id}" if several else build_id): (folder, data)
        for stem, build_id, folder, data in read
    }


def trees(builds: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """build id -> the kernel tree it built (metadata.json's ``tree.path``),
    for the builds that say."""
    paths = {i: (m.get("tree") or {}).get("path") for i, m in builds.items()}
    return {i: str(p) for i, p in paths.items() if p}


def group(builds: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each distinct diagnostic (by `Diagnostic.key`) once, with the builds and
    targets it hits and its total count; errors first, then most builds, then key."""
    groups: dict[str, dict[str, Any]] = {}
    for build_id, build in builds.items():
        for target, entry in build["targets"].items():
            for raw in entry.get("diagnostics") or ():
                d = Diagnostic.from_json(raw)
                g = groups.setdefault(
                    d.key,
                    {
                        "key": d.key,
                        "kind": d.kind.value,
                        "tool": d.tool.value,
                        "file": d.file,
                        "line": d.line,
                        "column": d.column,
                        "message": d.message,
                        "flag": d.flag,
                        "count": 0,
                        "builds": set(),
                        "targets": set(),
                        "new": None,  # None: no build was compared with a baseline
                        "new_in": set(),
                    },
                )
                g["count"] += d.count
                g["builds"].add(build_id)
                g["targets"].add(target)
                if "new" in raw:
                    g["new"] = bool(g["new"]) or bool(raw["new"])
                    if raw["new"]:
                        g["new_in"].add(build_id)
    out = [
        {
            **g,
            "builds": sorted(g["builds"]),
            "targets": sorted(g["targets"]),
            "new_in": sorted(g["new_in"]),
        }
        for g in groups.values()
    ]
    # New first (what a change introduced), then errors, then the most builds.
    out.sort(
        key=lambda g: (not g["new"], g["kind"] != Kind.ERROR.value, -len(g["builds"]), g["key"])
    )
    return out


def fixed(builds: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The baseline's diagnostics that *builds* no longer have (each target's
    ``baseline.fixed_diagnostics``, which keeps at most baseline.MAX_FIXED),
    each once with the builds and targets it is gone from; by key."""
    groups: dict[str, dict[str, Any]] = {}
    for build_id, build in builds.items():
        for target, entry in build["targets"].items():
            for rec in (entry.get("baseline") or {}).get("fixed_diagnostics") or ():
                g = groups.setdefault(
                    str(rec["key"]),
                    {
                        **{k: rec.get(k) for k in ("key", "kind", "tool", "file", "line")},
                        "message": str(rec.get("message", "")),
                        "flag": str(rec.get("flag") or ""),
                        "column": None,  # the baseline keeps no column
                        "builds": set(),
                        "targets": set(),
                    },
                )
                g["builds"].add(build_id)
                g["targets"].add(target)
    return [
        {**g, "builds": sorted(g["builds"]), "targets": sorted(g["targets"])}
        for _, g in sorted(groups.items())
    ]


def write(results_dir: Path, groups: Sequence[Mapping[str, Any]]) -> Path:
    """Write RESULTS/diagnostics.json; returns its path."""
    path = Path(results_dir) / DIAGNOSTICS
    write_json(path, {"schema": SCHEMA, "diagnostics": list(groups)})
    return path


def named(builds: Sequence[str], limit: int) -> str:
    """``a, b, c and 2 more``: the first *limit* of *builds*, and how many else."""
    text = ", ".join(builds[:limit])
    return text + (f" and {len(builds) - limit} more" if len(builds) > limit else "")


def line(g: Mapping[str, Any], width: int = MAX_WIDTH) -> str:
    """``file:line: kind: message [flag] - N builds: a, b, ...`` cut to *width*;
    ``>> `` before a diagnostic new against the baseline (spaces before the
    others when there was one)."""
    where = ":".join(str(x) for x in (g["file"], g["line"]) if x not in ("", None))
    flag = f" [{g['flag']}]" if g["flag"] else ""
    n = len(g["builds"])
    mark = "" if g.get("new") is None else ">> " if g["new"] else "   "
    text = (
        f"{mark}{where + ': ' if where else ''}{g['kind']}: {g['message']}{flag} - "
        f"{n} build{'s' if n != 1 else ''}: {', '.join(g['builds'])}"
    )
    return text if len(text) <= width else text[: max(0, width - 3)] + "..."


def lines(
    groups: Sequence[Mapping[str, Any]], width: int = MAX_WIDTH, limit: int = MAX_LINES
) -> list[str]:
    """At most *limit* lines for *groups*, the last saying how many more there are."""
    if len(groups) <= limit:
        return [line(g, width) for g in groups]
    shown = [line(g, width) for g in groups[: limit - 1]]
    return [*shown, f"... and {len(groups) - len(shown)} more in {DIAGNOSTICS}"]


def summarise(results_dir: Path, only: Collection[str] | None = None) -> list[dict[str, Any]]:
    """The grouped diagnostics of *results_dir* (of the builds in *only*)."""
    return group(read_builds(results_dir, only))
