"""The test cases a target ran (the kunit target's KUnit cases), as reported
results: their ids, the pytest outcome of each status, the text of a failed
case (its KTAP diagnostic lines, bounded), and counts for the summaries.

A case is a dict of TargetResult.cases: ``{"suite", "name", "status",
"reason", "diagnostics"}``. No pytest import: plugin/cases.py turns these
into reports, plugin/reporting.py and report/html.py count them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ..results import by_name

STATUSES = ("PASS", "FAIL", "SKIP", "ERROR")  # what a case can be, worst last but one
BROKEN = ("FAIL", "ERROR")
# pytest's outcome of a case's report: an ERROR case (the kernel crashed in
# it) fails as a FAIL does; its text says ERROR.
OUTCOMES: dict[str, Literal["passed", "failed", "skipped"]] = {
    "PASS": "passed",
    "FAIL": "failed",
    "ERROR": "failed",
    "SKIP": "skipped",
}
MAX_DIAGNOSTICS = 40  # KTAP lines of a failed case in its report; the rest are in the log
MAX_LINE = 500  # characters of one diagnostic line shown
SUMMARY_SHOWN = 20  # broken cases listed by the terminal summary


def case_id(case: Mapping[str, Any]) -> str:
    """``suite.case``, usable as the last part of a pytest node id (no ``::``,
    no spaces, which -k and the JUnit classname split at)."""
    suite, name = str(case.get("suite") or ""), str(case.get("name") or "")
    text = f"{suite}.{name}" if suite else name
    return "".join("_" if c.isspace() else c for c in text.replace("::", ":"))


def status(case: Mapping[str, Any]) -> str:
    """The case's status, ERROR for anything that is not a known status."""
    s = str(case.get("status", "")).upper()
    return s if s in STATUSES else "ERROR"


def outcome(case: Mapping[str, Any]) -> Literal["passed", "failed", "skipped"]:
    return OUTCOMES[status(case)]


def _bounded(line: Any) -> str:
    text = str(line)
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 3] + "..."


def diagnostics(case: Mapping[str, Any]) -> list[str]:
    """The case's KTAP diagnostic lines, at most MAX_DIAGNOSTICS, each bounded."""
    lines = [_bounded(x) for x in case.get("diagnostics") or []]
    if len(lines) > MAX_DIAGNOSTICS:
        more = len(lines) - MAX_DIAGNOSTICS
        lines = [*lines[:MAX_DIAGNOSTICS], f"... {more} more lines in the console log"]
    return lines


def failure_text(case: Mapping[str, Any], where: str = "") -> str:
    """What a failed or errored case's report shows: its status and reason,
    its diagnostic lines, and where the whole console is."""
    head = f"{case_id(case)} {status(case)}"
    reason = str(case.get("reason") or "")
    lines = [f"{head}: {_bounded(reason)}" if reason else head]
    lines += [f"  {d}" for d in diagnostics(case)]
    if where:
        lines.append(f"console: {where}")
    return "\n".join(lines)


def skip_reason(case: Mapping[str, Any]) -> str:
    return _bounded(case.get("reason") or "skipped by KUnit")


def for_report(ran: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The cases as the HTML report lists them: failed and errored first,
    then in run order; each with its id, status, reason and diagnostics."""
    shown = [
        {
            "id": case_id(c),
            "status": status(c),
            "reason": _bounded(c.get("reason") or ""),
            "diagnostics": diagnostics(c),
        }
        for c in ran
    ]
    return sorted(shown, key=lambda c: c["status"] not in BROKEN)


def statuses(cases: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """``{case id: status}`` in run order (what results.json keeps per target)."""
    return {case_id(c): status(c) for c in cases}


def counts(by_id: Mapping[str, str]) -> dict[str, int]:
    """``{"cases": n, "PASS": n, ...}`` of a target's ``{case id: status}``;
    only the statuses that occur."""
    out: dict[str, int] = {"cases": len(by_id)}
    for s in STATUSES:
        n = sum(1 for v in by_id.values() if v == s)
        if n:
            out[s] = n
    return out


def totals(builds: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """The counts over every target's cases of results.json-like *builds*;
    empty when no target ran cases."""
    merged: dict[str, int] = {}
    for build in builds.values():
        for t in build.get("targets", {}).values():
            by_id = t.get("cases") or {}
            if not by_id:
                continue
            for k, n in counts(by_id).items():
                merged[k] = merged.get(k, 0) + n
    return merged


def broken(builds: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``build::target::case STATUS`` of every failed or errored case."""
    return [
        f"{bid}::{target}::{cid} {s}"
        for bid, build in sorted(by_name(builds).items())
        for target, t in build.get("targets", {}).items()
        for cid, s in (t.get("cases") or {}).items()
        if s in BROKEN
    ]


def summary_lines(builds: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The terminal summary of the cases of *builds*: one count line, then
    the broken cases (at most SUMMARY_SHOWN); nothing when none ran."""
    total = totals(builds)
    if not total:
        return []
    parts = ", ".join(f"{total[s]} {s}" for s in STATUSES if s in total)
    lines = [f"{total['cases']} cases ({parts})"]
    bad = broken(builds)
    lines += [f"  {b}" for b in bad[:SUMMARY_SHOWN]]
    if len(bad) > SUMMARY_SHOWN:
        lines.append(f"  ... {len(bad) - SUMMARY_SHOWN} more in results.json")
    return lines
