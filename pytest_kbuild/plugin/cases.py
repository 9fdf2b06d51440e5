"""Each test case a target ran (KUnit's) as a pytest report of its own: a
line in the terminal, a FAILED entry with its KTAP diagnostics, a JUnit
testcase (classname the build's, name ``suite.case``), on the process that
writes them, with or without xdist.

A case report's node id is ``<target's node id>::<suite.case>``. It is sent
right after its target's reports, before the target's logfinish, so that
pytest's progress line follows it. Under xdist a worker may send reports of
its running item only (xdist checks the node id): the case's own id
travels in an attribute and is put back when the controller reads the report.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import pytest

from ..report import cases

ITEM_ATTR = "kbuild_cases"  # a BuildItem's cases (TargetResult.cases), set by runtest
REPORT_ATTR = "kbuild_cases"  # the target's call report: {case id: status}
NODEID_ATTR = "kbuild_case_nodeid"  # a case report's own node id, across xdist
CONSOLE_ATTR = "kbuild_console"  # a BuildItem's console log of its cases, if any


class CaseReports:
    """Registered on every process when a matrix is given."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.worker = hasattr(config, "workerinput")
        self.pending: dict[str, pytest.Item] = {}  # node id -> item whose cases are due

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        ran = getattr(item, ITEM_ATTR, None)
        if call.when == "call" and ran:
            setattr(report, REPORT_ATTR, cases.statuses(ran))
            self.pending[item.nodeid] = item
        return report

    # tryfirst: before the terminal's logfinish writes the progress, and
    # before xdist's worker sends logfinish to the controller.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        item = self.pending.pop(nodeid, None)
        if item is None:
            return
        for case in getattr(item, ITEM_ATTR, None) or ():
            report = case_report(item, case)
            if self.worker:  # xdist sends reports of the running item only
                setattr(report, NODEID_ATTR, report.nodeid)
                report.nodeid = item.nodeid
            self.config.hook.pytest_runtest_logreport(report=report)

    @pytest.hookimpl(wrapper=True)
    def pytest_report_from_serializable(self, data: dict[str, Any]) -> Generator[None, Any, Any]:
        report = yield
        own = getattr(report, NODEID_ATTR, None)
        if own:  # a case's report from a worker: its own node id again
            report.nodeid = own
            delattr(report, NODEID_ATTR)
        return report

    # trylast: after the terminal counted the report.
    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if any(k == "kunit_case" for k, _ in report.user_properties):
            forget_progress(self.config, report)


def forget_progress(config: pytest.Config, report: pytest.TestReport) -> None:
    """Leave a case out of the terminal's progress, which counts collected
    items: cases are not items, and counting them shows more than 100 %.
    (The terminal keeps node ids, as strings before pytest 9.)"""
    terminal: Any = config.pluginmanager.get_plugin("terminalreporter")
    reported = getattr(terminal, "_progress_nodeids_reported", None)
    if isinstance(reported, set):
        reported.discard(report.nodeid)
        reported.discard(getattr(report, "id", None))


def case_report(item: pytest.Item, case: Mapping[str, Any]) -> pytest.TestReport:
    """The call report of one case of *item*'s target."""
    cid = cases.case_id(case)
    path, line, domain = item.location
    status = cases.status(case)
    outcome = cases.outcome(case)
    longrepr: Any = None
    if outcome == "skipped":
        longrepr = (str(path), (line or 0) + 1, f"Skipped: {cases.skip_reason(case)}")
    elif outcome == "failed":
        longrepr = cases.failure_text(case, getattr(item, CONSOLE_ATTR, ""))
    props = dict(item.user_properties)
    return pytest.TestReport(
        f"{item.nodeid}::{cid}",
        (path, line, f"{domain}::{cid}"),
        {cid: 1},
        outcome,
        longrepr,
        "call",
        user_properties=[
            ("kunit_case", cid),
            ("status", status),
            ("build", props.get("build_id", "")),
            ("target", props.get("target", "")),
        ],
    )
