"""The matrix as a grid: one row per arch, one column per toolchain and
kconfig, a status per build (pass, the target that failed or errored,
skip) with its warning and new-warning counts; then each failed build's
first error and reproducer. Made from results.json's ``builds`` (so a merged
results dir gives the same grid). Plain ASCII: CI log viewers show it as
it is. No pytest import.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..results import by_name

# The worst outcome of a build's targets names the build; an item error
# without a status (a missing compiler at setup) is an ERROR.
# WARNING (passed with problems) shows as "warn <target>".
_RANK = {"PASS": 0, "SKIP": 1, "WARNING": 2, "INTERRUPTED": 3, "FAIL": 4, "ERROR": 5}
_WORD = {
    "PASS": "pass",
    "SKIP": "skip",
    "WARNING": "warn",
    "INTERRUPTED": "INTR",
    "FAIL": "FAIL",
    "ERROR": "ERROR",
}
MAX_FAILURES = 20
LEGEND = "w: warnings; +N: new vs baseline"
MAX_WIDTH = 160  # a CI log is read at any width; beyond this, tables split


@dataclass(frozen=True)
class Cell:
    """One build's place in the grid."""

    status: str  # PASS, WARNING, FAIL, ERROR, SKIP, INTERRUPTED
    target: str  # the first target with that status, when it is not PASS/SKIP
    warnings: int
    new_warnings: int
    first_error: str
    reproducer: str

    @property
    def text(self) -> str:
        word = _WORD[self.status]
        if self.target and self.status not in ("PASS", "SKIP"):
            word += f" {self.target}"
        if self.warnings:
            word += f" {self.warnings}w"
        if self.new_warnings:
            word += f" +{self.new_warnings}"
        return word


def status(target: Mapping[str, Any]) -> str:
    """A results.json target's status (an item error at setup has none: ERROR)."""
    given = target.get("status")
    if given in _RANK:
        return str(given)
    return {"passed": "PASS", "skipped": "SKIP", "failed": "FAIL"}.get(target["outcome"], "ERROR")


def cell(build: Mapping[str, Any]) -> Cell:
    """The grid cell of one results.json build."""
    targets = build["targets"]
    statuses = {name: status(t) for name, t in targets.items()}
    worst = max(statuses.values(), key=_RANK.__getitem__, default="SKIP")
    if worst == "SKIP" and any(s == "PASS" for s in statuses.values()):
        worst = "PASS"  # a target that cannot apply does not make the build a skip
    first = next((n for n, s in statuses.items() if s == worst), "")
    t = targets.get(first, {})
    return Cell(
        status=worst,
        target=first,
        warnings=sum(int(x.get("warnings", 0)) for x in targets.values()),
        new_warnings=sum(int(x.get("new_warnings", 0)) for x in targets.values()),
        first_error=str(t.get("first_error", "")),
        reproducer=str(t.get("reproducer", "")),
    )


def column(name: str, build: Mapping[str, Any]) -> tuple[str, str]:
    """(toolchain, kconfig and name): a build's column, read from its name
    (`results.names`) so that a named build (``...-kasan``) has a column of
    its own, and each matrix its own when the run has several (``a/defconfig``)."""
    matrix, _, build_id = name.rpartition("/")
    head = f"{build['arch']}-{build['toolchain']}-"
    rest = build_id[len(head) :] if build_id.startswith(head) else str(build["kconfig"])
    return str(build["toolchain"]), f"{matrix}/{rest}" if matrix else rest


def render(builds: Mapping[str, Mapping[str, Any]], width: int = 120) -> list[str]:
    """The grid's lines, at most *width* characters each: the columns are
    split over several tables when they do not fit side by side."""
    builds = by_name(builds)
    rows = sorted({str(b["arch"]) for b in builds.values()})
    columns = sorted({column(i, b) for i, b in builds.items()})
    cells = {(str(b["arch"]), column(i, b)): cell(b).text for i, b in builds.items()}
    label = max(len("arch"), *(len(r) for r in rows))
    widths = {
        c: max(len(c[0]), len(c[1]), *(len(cells.get((r, c), "-")) for r in rows)) for c in columns
    }
    out: list[str] = []
    for chunk in _chunks(columns, widths, width - label - 1):
        if out:
            out.append("")
        out.append(_line("", chunk, widths, label, lambda c: c[0]))
        out.append(_line("arch", chunk, widths, label, lambda c: c[1]))
        out.append("-" * label + "".join("-+-" + "-" * widths[c] for c in chunk))
        for r in rows:
            out.append(_line(r, chunk, widths, label, lambda c, r=r: cells.get((r, c), "-")))
    out.append(LEGEND)
    return out


def _line(
    head: str, chunk: Sequence[tuple[str, str]], widths: Mapping[Any, int], label: int, text: Any
) -> str:
    return (head.ljust(label) + "".join(f" | {text(c).ljust(widths[c])}" for c in chunk)).rstrip()


def _chunks(
    columns: Sequence[tuple[str, str]], widths: Mapping[Any, int], room: int
) -> list[list[tuple[str, str]]]:
    """*columns* in groups whose cells (3 characters of separator each) fit in *room*."""
    chunks: list[list[tuple[str, str]]] = [[]]
    used = 0
    for c in columns:
        need = widths[c] + 3
        if chunks[-1] and used + need > room:
            chunks.append([])
            used = 0
        chunks[-1].append(c)
        used += need
    return chunks


def failures(builds: Mapping[str, Mapping[str, Any]], width: int = 120) -> list[str]:
    """Each build that failed or errored: its first error, wrapped at
    *width* but never cut (nor a word of it broken: file:line:col stays
    whole), and the reproducer (never wrapped: it is to be copied)."""
    out: list[str] = []
    broken = [(i, cell(b)) for i, b in sorted(by_name(builds).items())]
    broken = [(i, c) for i, c in broken if c.status in ("FAIL", "ERROR", "INTERRUPTED")]
    for build_id, c in broken[:MAX_FAILURES]:
        line = f"{build_id} {c.target} {c.status}: {c.first_error or '(see its log)'}"
        out += textwrap.wrap(
            line, width, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
        )
        if c.reproducer:
            out.append(f"  reproduce: {c.reproducer}")
    if len(broken) > MAX_FAILURES:
        out.append(f"... and {len(broken) - MAX_FAILURES} more (results.json lists them all)")
    return out
