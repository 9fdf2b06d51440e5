"""Read KUnit's KTAP output from a kernel console into test cases.

The kernel prints KTAP among its other messages: a top-level header and
plan (``KTAP version 1``, ``1..N``), then per suite an indented header
(``# Subtest: name``, ``1..M``), one result line per case (``ok 2 name
# SKIP why`` or ``not ok 3 name``), a parameterised case's results one level
deeper, and the suite's own result at the top level. A line of a case's
output (``# name: EXPECTATION FAILED at ...`` and what follows) comes
before the case's result, so such lines belong to the case that comes next.

Pure functions on text, so recorded consoles test every outcome."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..results import Status
from . import console as bootconsole

INDENT = 4  # KUnit's KUNIT_SUBTEST_INDENT: one level of nesting
TAIL_LINES = 30  # console lines kept after the last KTAP line when a run stops mid-suite

# "[    0.123456] " (printk time), optionally with a caller id "[    T1] ".
_TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]( ?\[\s*[CT]\d+\])? ?")
_VERSION = re.compile(r"^K?TAP version \d+$")
_PLAN = re.compile(r"^1\.\.(\d+)$")
_SUBTEST = re.compile(r"^# Subtest: (.+)$")
# 6.1 prints "ok 1 name"; older kernels and the KTAP spec allow "ok 1 - name".
_RESULT = re.compile(r"^(ok|not ok) (\d+)(?: -)?(?: (.*))?$")
_CASE_SAYS = re.compile(r"^# ([^\s:]+): ")
_ON_FAILURE = ("FAILED", "Expected", "failed")


@dataclass
class Case:
    """One KUnit case's result (a parameterised case is one case)."""

    suite: str
    name: str
    status: Status
    reason: str = ""
    diagnostics: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The shape of one entry of ``TargetResult.cases``."""
        return {
            "suite": self.suite,
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "diagnostics": list(self.diagnostics),
        }


@dataclass
class Report:
    """What a console's KTAP says: the cases in the order they ran, and
    whether the run got to its end."""

    found: bool = False  # a KTAP (or TAP) version line was seen
    planned: int | None = None  # the top-level plan's number of suites
    suites: list[str] = field(default_factory=list)  # suites that reported a result
    cases: list[Case] = field(default_factory=list)
    crashed: str = ""  # why the run stopped in the middle of a suite, or ''

    def count(self, status: Status) -> int:
        return sum(1 for c in self.cases if c.status is status)

    def counts(self) -> dict[str, int]:
        """Suites, cases and cases per status, for metadata.json."""
        out = {"suites": len(self.suites), "cases": len(self.cases)}
        for s in (Status.PASS, Status.FAIL, Status.SKIP, Status.ERROR):
            out[s.value.lower()] = self.count(s)
        return out

    def verdict(self) -> tuple[Status, str]:
        """The target's status and reason: PASS when every case passed or was
        skipped, FAIL when one failed or the kernel crashed in one, ERROR
        when no KTAP was seen or it stopped between suites."""
        if not self.found:
            return Status.ERROR, "no KTAP output on the console"
        bad = [c for c in self.cases if c.status in (Status.FAIL, Status.ERROR)]
        if bad:
            first = bad[0]
            what = f"{len(bad)} of {len(self.cases)} KUnit cases failed"
            if self.crashed:
                what += f" (crash: {self.crashed})"
            return Status.FAIL, f"{what}; first: {first.suite}.{first.name}"
        if self.planned is not None and len(self.suites) < self.planned:
            return (
                Status.ERROR,
                f"KTAP stopped after {len(self.suites)} of {self.planned} suites",
            )
        if not self.cases:
            return Status.ERROR, "KTAP output without any test case"
        return Status.PASS, (
            f"{len(self.suites)} suites, {len(self.cases)} cases: "
            f"{self.count(Status.PASS)} passed, {self.count(Status.SKIP)} skipped"
        )


def strip_prefix(line: str) -> str:
    """*line* without a carriage return, trailing blanks and printk's time stamp."""
    return _TIMESTAMP.sub("", line.replace("\r", "").rstrip(), count=1)


def _outcome(ok: str, directive: str) -> tuple[Status, str]:
    word, _, why = directive.strip().partition(" ")
    if word.upper() in ("SKIP", "TODO"):
        return Status.SKIP, why.strip() if word.upper() == "SKIP" else directive.strip()
    return (Status.PASS if ok == "ok" else Status.FAIL), ""


def _failure_reason(diagnostics: list[str]) -> str:
    for line in diagnostics:
        if any(word in line for word in _ON_FAILURE):
            return line.strip()
    return diagnostics[0].strip() if diagnostics else "not ok"


class _Parser:
    def __init__(self) -> None:
        self.report = Report()
        self.suite: str | None = None  # the suite whose header came and result did not
        self.suite_cases = 0
        self.last_case = 0  # the number of the suite's last reported case
        self.pending: list[str] = []  # output of the case that comes next
        self.prefix = ""  # what stood before the first version line (a log level, ...)

    def feed(self, line: str) -> bool:
        """Take one console line; True when it was KTAP."""
        if self.prefix and line.startswith(self.prefix):
            line = line[len(self.prefix) :]
        body = line.strip()
        if not body:
            return False
        depth = (len(line) - len(line.lstrip(" "))) // INDENT
        if _VERSION.match(body):
            return True
        if depth == 0:
            return self._top(body)
        plan = _PLAN.match(body)
        subtest = _SUBTEST.match(body)
        result = _RESULT.match(body)
        if subtest and depth == 1:
            self.suite, self.suite_cases, self.last_case = subtest.group(1), 0, 0
            self.pending = []
        elif plan or subtest:
            pass
        elif result and depth == 1:
            self._case(result)
        elif result:
            # A parameter's result: its failures are the case's diagnostics.
            if result.group(1) != "ok":
                self.pending.append(body)
        else:
            self.pending.append(line[INDENT:].rstrip())
        return True

    def _top(self, body: str) -> bool:
        plan = _PLAN.match(body)
        if plan and self.report.planned is None and self.suite is None:
            self.report.planned = int(plan.group(1))
            return True
        result = _RESULT.match(body)
        if not result:
            return False  # a kernel message between KTAP lines
        name, _, directive = (result.group(3) or "").partition(" # ")
        status, why = _outcome(result.group(1), directive)
        if status == Status.FAIL and not self.suite_cases:
            # The suite failed before any case ran (its init failed).
            diags = self.pending
            self.report.cases.append(Case(name, name, Status.FAIL, _failure_reason(diags), diags))
        self.report.suites.append(name.strip())
        self.suite, self.suite_cases, self.last_case, self.pending = None, 0, 0, []
        return True

    def _case(self, result: re.Match[str]) -> None:
        name, _, directive = (result.group(3) or "").partition(" # ")
        status, why = _outcome(result.group(1), directive)
        diags, self.pending = self.pending, []
        if status == Status.FAIL:
            why = _failure_reason(diags)
        self.report.cases.append(Case(self.suite or "", name.strip(), status, why, diags))
        self.suite_cases += 1
        self.last_case = int(result.group(2))

    def stopped(self, after: list[str]) -> None:
        """The console ended: a suite still open means its running case never
        reported (the kernel crashed, hung or was stopped); *after* is the
        console after the last KTAP line."""
        if self.suite is None:
            return
        crash = next(
            (m.group(1).strip() for line in after if (m := bootconsole.CRASH.search(line))), ""
        )
        self.report.crashed = crash or "the console ended in the middle of a suite"
        said = [m.group(1) for line in self.pending if (m := _CASE_SAYS.match(line))]
        named = [s for s in said if s != self.suite]
        name = named[-1] if named else f"case {self.last_case + 1}"
        tail = [line for line in after if line.strip()][-TAIL_LINES:]
        reason = f"crashed: {crash}" if crash else "no result: the console ended in this case"
        self.report.cases.append(
            Case(self.suite, name, Status.ERROR, reason, [*self.pending, *tail])
        )


def parse(text: str) -> Report:
    """The KTAP report on console *text* (an empty Report when there is none)."""
    lines = [strip_prefix(line) for line in text.splitlines()]
    start = next((i for i, line in enumerate(lines) if "TAP version " in line), None)
    parser = _Parser()
    if start is None:
        return parser.report
    parser.report.found = True
    head = lines[start]
    at = head.index("TAP version ")
    at -= 1 if head[:at].endswith("K") else 0
    if head[:at].strip():  # a constant prefix such as a log level: strip it everywhere
        parser.prefix = head[:at]
    last = start
    for i in range(start + 1, len(lines)):
        if parser.feed(lines[i]):
            last = i
    parser.stopped(lines[last + 1 :])
    return parser.report
