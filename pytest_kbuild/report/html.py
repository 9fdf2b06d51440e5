"""The HTML report of a results dir: one self-contained file (its style,
script and data inline; no network), the grid coloured by status with
filters, each build's targets, diagnostics (new ones marked), log tail,
artifact links and reproducer, and the diagnostics of the whole run.

Made from what a results dir holds (results.json, each build's
metadata.json and build.log), so a merged dir of shards gives one report.
The page is data/report/report.html; this module fills in its data.
No pytest import: plugin/reporting.py and ``pytest-kbuild report`` use it.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..definitions import DATA_DIR
from ..results import BUILD_LOG, METADATA, by_name, summary_builds
from . import cases, grid, grouping

TEMPLATE = DATA_DIR / "report" / "report.html"
REPORT = "report.html"
SCHEMA = 1
LOG_TAIL = 60  # lines of build.log each build shows
_SLOT = "/*KBUILD_REPORT_DATA*/"


def _from_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A results.json-like build entry for a build only its metadata.json tells of."""
    targets = {
        name: {
            "status": t.get("status"),
            "outcome": "",
            "warnings": t.get("warnings", 0),
            "first_error": (t.get("errors") or [t.get("reason", "")])[0],
            "reproducer": meta.get("reproducer", ""),
        }
        for name, t in (meta.get("targets") or {}).items()
    }
    return {**{k: meta.get(k, "") for k in ("arch", "toolchain", "kconfig")}, "targets": targets}


def _tail(path: Path, lines: int = LOG_TAIL) -> str:
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - 256 * 1024))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _link(path: Path, base: Path) -> str:
    """*path* relative to the report's folder, as a URL path."""
    return Path(os.path.relpath(path, base)).as_posix()


def _build(
    build_id: str,
    entry: Mapping[str, Any],
    meta: Mapping[str, Any] | None,
    folder: Path | None,
    base: Path,
) -> dict[str, Any]:
    c = grid.cell(entry)
    column = grid.column(build_id, entry)
    targets = []
    for name, t in entry["targets"].items():
        m = ((meta or {}).get("targets") or {}).get(name, {})
        targets.append(
            {
                "name": name,
                "status": grid.status(t),
                "duration": float(m.get("duration") or t.get("duration") or 0),
                "queued": float(m.get("queued") or t.get("queued") or 0),
                "reason": m.get("reason") or t.get("reason") or "",
                "errors": m.get("errors") or ([t["first_error"]] if t.get("first_error") else []),
                "warnings": int(t.get("warnings") or 0),
                "attempts": len(m.get("attempts") or ()),
                "cases": cases.for_report(m.get("cases") or ()),
                "diagnostics": [
                    {k: d.get(k) for k in ("kind", "tool", "file", "line", "message", "flag")}
                    | {"count": d.get("count", 1), "new": d.get("new"), "raw": d.get("raw", [])}
                    for d in m.get("diagnostics") or ()
                ],
            }
        )
    links = []
    if folder is not None:
        names = [BUILD_LOG, METADATA] + [str(a) for a in (meta or {}).get("artifacts") or {}]
        for name in dict.fromkeys(names):
            if (folder / name).is_file():
                links.append({"name": name, "href": _link(folder / name, base)})
    toolchain = (meta or {}).get("toolchain")
    toolchain = toolchain if isinstance(toolchain, Mapping) else {}  # {name, compiler, version}
    return {
        "id": build_id,
        "compiler": str(toolchain.get("version") or toolchain.get("compiler") or ""),
        "arch": str(entry.get("arch", "")),
        "toolchain": column[0],
        "kconfig": column[1],
        "status": c.status,
        "cell": c.text,
        "warnings": c.warnings,
        "new_warnings": c.new_warnings,
        "reproducer": (meta or {}).get("reproducer") or c.reproducer,
        "skip_reason": (meta or {}).get("skip_reason") or "",
        "targets": targets,
        "links": links,
        "log_tail": _tail(folder / BUILD_LOG) if folder is not None else "",
    }


def data(results_dir: Path, out: Path, only: Collection[str] | None = None) -> dict[str, Any]:
    """What the page shows, with links relative to *out*'s folder; with
    *only*, of those builds (a run's own, not earlier runs' in the same dir)."""
    results_dir = Path(results_dir)
    found = grouping.read_build_folders(results_dir, only)
    metas = {i: meta for i, (_, meta) in found.items()}
    folders = {i: folder for i, (folder, _) in found.items()}
    summary = by_name(summary_builds(results_dir))
    entries = {**{i: _from_metadata(m) for i, m in metas.items()}, **summary}
    base = out.resolve().parent
    builds = [_build(i, e, metas.get(i), folders.get(i), base) for i, e in sorted(entries.items())]
    return {
        "schema": SCHEMA,
        "title": f"kbuild: {results_dir.resolve().name}",
        "run": run_header(metas.values()),
        "builds": builds,
        "diagnostics": grouping.group(metas),
        "legend": grid.LEGEND,
    }


def run_header(metas: Iterable[Mapping[str, Any]]) -> list[list[str]]:
    """The run in a few (label, value) rows from its builds' metadata.json:
    the tree and its git commit and describe, the kernel release, when it
    started, its wall time (first start to last finish) and pytest-kbuild's
    version; a row with several values lists each once."""
    metas = list(metas)

    def values(read: Callable[[Mapping[str, Any]], Any]) -> str:
        seen = dict.fromkeys(str(v) for m in metas if (v := read(m)))
        return ", ".join(seen)

    def tree(m: Mapping[str, Any]) -> Mapping[str, Any]:
        t = m.get("tree")
        return t if isinstance(t, Mapping) else {}

    def git(m: Mapping[str, Any]) -> Mapping[str, Any]:
        g = tree(m).get("git")
        return g if isinstance(g, Mapping) else {}

    starts = sorted(str(m["started"]) for m in metas if m.get("started"))
    ends = sorted(str(m["finished"]) for m in metas if m.get("finished"))
    wall = ""
    if starts and ends:
        seconds = (
            datetime.fromisoformat(ends[-1]) - datetime.fromisoformat(starts[0])
        ).total_seconds()
        wall = f"{max(0.0, seconds):.0f} s"
    rows = [
        ("tree", values(lambda m: tree(m).get("path"))),
        ("git commit", values(lambda m: git(m).get("commit"))),
        ("git describe", values(lambda m: git(m).get("describe"))),
        ("kernel release", values(lambda m: m.get("kernelrelease"))),
        ("started", starts[0] if starts else ""),
        ("wall time", wall),
        ("pytest-kbuild", values(lambda m: m.get("pytest_kbuild_version"))),
    ]
    return [[label, value] for label, value in rows if value]


def render(page: Mapping[str, Any]) -> str:
    """The page with *page* inline; every ``<`` of the JSON is escaped, so
    that no log line can end the script element."""
    blob = json.dumps(page, ensure_ascii=False).replace("<", "\\u003c")
    text = TEMPLATE.read_text()
    return text.replace("KBUILD_REPORT_TITLE", html.escape(str(page["title"]))).replace(_SLOT, blob)


def write(results_dir: Path, out: Path | None = None, only: Collection[str] | None = None) -> Path:
    """Write the report of *results_dir* (of the builds *only* names, if
    given) to *out* (default RESULTS/report.html)."""
    out = Path(out or Path(results_dir) / REPORT)
    page = render(data(results_dir, out, only))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        tmp.write_text(page)
        tmp.replace(out)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk leaves no half page behind
        raise
    return out
