"""Run-level results: results.json and the terminal summary, written by the
controller (or the only process) from the reports of every BuildItem."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ..build import workdirs
from ..build.record import now
from ..errors import KbuildError
from ..report import cases, codequality, folds, github, grid, grouping, interruption, kcidb, sarif
from ..report import html as report
from ..report.kcidb import Destination as KcidbDestination
from ..results import SUMMARY, SUMMARY_SCHEMA, by_name, names, scope_of, totals, write_json
from ..results import headline as summary_headline
from ..run import signals
from ..run.scheduling import CACHE_KEY
from ..spec import BuildSpec
from .cases import REPORT_ATTR as CASES_OF_REPORT

_IDENTITY = ("arch", "toolchain", "kconfig")
# The item properties results.json keeps per target.
_KEPT = (
    "duration",
    "queued",
    "errors",
    "warnings",
    "log",
    "reproducer",
    "selection",
    "attempts",
    "first_error",
)
BASELINE = ("baseline", "new_warnings", "new_errors", "fixed", "unchanged")  # item properties


class ResultsReporter:
    """Collects target reports into one summary; registered by plugin/configure.py."""

    def __init__(
        self,
        results_dir: Path,
        matrices: tuple[Path, ...],
        cache: Any = None,
        codequality: Path | None = None,
        sarif: Path | None = None,
        baseline: Path | None = None,
        html: Path | None = None,
        planned: Callable[[], Iterable[tuple[str, BuildSpec]]] = lambda: (),
        kcidb: KcidbDestination | None = None,
    ) -> None:
        self.results_dir = results_dir
        self.planned = planned  # the run's builds (matrix as reported, spec)
        self.started = now()  # builds whose metadata.json started earlier are not this run's
        self.baseline = baseline  # --kbuild-baseline, if given
        self.codequality = codequality  # where the Code Quality report goes, if anywhere
        self.sarif = sarif  # where the SARIF log goes, if anywhere
        self.matrices = matrices
        self.cache = cache  # pytest's config.cache, or None with -p no:cacheprovider
        self.builds: dict[str, dict[str, Any]] = {}
        self.durations: dict[str, float] = {}
        self.diagnostics: list[dict[str, Any]] = []
        self.html = html  # where the HTML report goes, if anywhere
        self.kcidb = kcidb  # where the KCIDB document goes, if anywhere
        self.trees: dict[str, str] = {}  # build (results.names) -> the kernel tree it built
        self.records: dict[str, dict[str, Any]] = {}  # build (results.names) -> metadata.json
        self.problems: list[str] = []  # the reports that could not be written, and why
        self.lost = ""  # why results.json could not be written (the run fails)

    def pytest_runtest_logreport(self, report: Any) -> None:
        props = dict(report.user_properties)
        if "build_id" not in props:
            return
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self._record(props, report)
        if report.when == "call" and "duration" in props:
            scope = scope_of(report.nodeid)
            self.durations[scope] = self.durations.get(scope, 0.0) + props["duration"]

    def _record(self, props: Mapping[str, Any], report: Any) -> None:
        build = self.builds.setdefault(
            scope_of(report.nodeid),
            {
                "build_id": props["build_id"],
                **{k: props[k] for k in _IDENTITY},
                "matrix": report.location[0],
                "targets": {},
            },
        )
        outcome = (
            report.outcome if report.when == "call" else ("error" if report.failed else "skipped")
        )
        entry: dict[str, Any] = {"outcome": outcome, "status": props.get("status")}
        if report.skipped and isinstance(report.longrepr, tuple):
            entry["reason"] = report.longrepr[2].removeprefix("Skipped: ")
        for key in (*_KEPT, *BASELINE):
            if key in props:
                entry[key] = props[key]
        cache = {k.removeprefix("cache_"): v for k, v in props.items() if k.startswith("cache_")}
        if cache:
            entry["cache"] = cache
        ran = getattr(report, CASES_OF_REPORT, None)  # {case id: status}
        if ran:
            entry["cases"] = dict(ran)
        build["targets"][props["target"]] = entry

    def summary(self) -> dict[str, Any]:
        out = {
            "schema": SUMMARY_SCHEMA,
            "matrices": [str(m) for m in self.matrices],
            "results_dir": str(self.results_dir),
            "totals": totals(self.builds),
            "builds": dict(sorted(self.builds.items())),
        }
        case_totals = cases.totals(self.builds)
        if case_totals:
            out["case_totals"] = case_totals
        if self.baseline is not None:
            out["baseline"] = {"path": str(self.baseline), **baseline_totals(self.builds)}
        return out

    # trylast: after xdist has stopped its workers, whose metadata.json then
    # say which targets they interrupted.
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: Any) -> None:
        if session.exitstatus == pytest.ExitCode.INTERRUPTED or signals.received():
            interruption.mark(self.builds, self.planned(), self.results_dir, self.started)
        if self.builds:
            summary = self.summary()
            try:
                write_json(self.results_dir / SUMMARY, summary)
            except OSError as err:
                # A full disk or a dir gone read-only: say so, and the run
                # cannot pass, since its results are not where CI looks.
                space = workdirs.free_space({"results dir": self.results_dir})
                self.lost = f"{SUMMARY} not written: {err.strerror or err}" + (
                    f" ({space})" if space else ""
                )
                if session.exitstatus == 0:
                    session.exitstatus = 1
            # From this run's builds' metadata.json: the same for remote workers' builds.
            try:
                records = grouping.read_builds(self.results_dir, set(names(self.builds).values()))
                self.records = records
                self.trees = grouping.trees(records)
                self.diagnostics = grouping.group(records)
                grouping.write(self.results_dir, self.diagnostics)
            except (KbuildError, OSError) as err:
                self.problems.append(f"diagnostics.json not written: {err}")
            if self.codequality is not None:
                try:
                    codequality.write(self.codequality, self.diagnostics)
                except OSError as err:
                    self.problems.append(
                        f"code quality report {self.codequality} not written: {err}"
                    )
            if self.sarif is not None:
                try:
                    sarif.write(self.sarif, self.diagnostics, self.trees, sarif.workspace())
                except OSError as err:
                    self.problems.append(f"SARIF report {self.sarif} not written: {err}")
            if self.html is not None:
                try:
                    report.write(self.results_dir, self.html, set(names(self.builds).values()))
                except (KbuildError, OSError) as err:
                    self.problems.append(f"HTML report {self.html} not written: {err}")
                    self.html = None
            if self.kcidb is not None:
                try:
                    kcidb.write(self.kcidb, self.results_dir, summary)
                except (KbuildError, OSError) as err:
                    self.problems.append(f"KCIDB document {self.kcidb.path} not written: {err}")
                    self.kcidb = None
        if self.cache is not None and self.durations:
            # Remember each build's time so the next run starts the longest first.
            remembered = dict(self.cache.get(CACHE_KEY, {}))
            remembered.update({k: round(v, 1) for k, v in self.durations.items() if v > 0})
            self.cache.set(CACHE_KEY, remembered)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.builds:
            return
        headline = summary_headline(self.builds)
        terminalreporter.write_sep("-", "kbuild")
        terminalreporter.write_line(f"{headline}; results in {self.results_dir}")
        if self.html is not None:
            terminalreporter.write_line(f"HTML report: {self.html}")
        if self.kcidb is not None:
            terminalreporter.write_line(f"KCIDB document: {self.kcidb.path}")
        for line in (baseline_line(self.builds), cache_line(self.builds)):
            if line:
                terminalreporter.write_line(line)
        for problem in self.problems:
            terminalreporter.write_line(f"kbuild: {problem}", yellow=True)
        if self.lost:
            terminalreporter.write_line(f"kbuild: ERROR: {self.lost}", red=True)
        # -qq: the totals and what broke; the grid, cases and diagnostics go.
        quietest = terminalreporter.config.option.verbose <= -2
        width = min(grid.MAX_WIDTH, terminalreporter._tw.fullwidth - 1)
        if not quietest:
            terminalreporter.write_sep("-", "kbuild grid")
            for text in coloured(grid.render(self.builds, width), terminalreporter._tw):
                terminalreporter.write_line(text)
        broken = grid.failures(self.builds, width)
        if broken:
            terminalreporter.write_sep("-", "kbuild failed builds")
            for text in broken + folds.failed_logs(self.builds, self.records, os.environ):
                terminalreporter.write_line(text)
        if quietest:
            if github.active(os.environ):
                self._github(terminalreporter, headline)
            return
        ran = cases.summary_lines(self.builds)
        if ran:
            terminalreporter.write_sep("-", "kbuild cases (KUnit)")
            for text in ran:
                terminalreporter.write_line(text)
        if self.diagnostics:
            width = min(grouping.MAX_WIDTH, terminalreporter._tw.fullwidth - 1)
            terminalreporter.write_sep("-", f"kbuild diagnostics ({len(self.diagnostics)})")
            for text in grouping.lines(self.diagnostics, width):
                terminalreporter.write_line(text)
        if github.active(os.environ):
            self._github(terminalreporter, headline)

    def _github(self, terminalreporter: Any, headline: str) -> None:
        """In a GitHub Actions step: the diagnostics as annotations on the
        diff, and the summary on the job's page."""
        workspace = os.environ.get("GITHUB_WORKSPACE")
        where = Path(workspace) if workspace else None
        for text in github.workflow_commands(self.diagnostics, self.trees, where):
            terminalreporter.write_line(text)
        markdown = github.step_summary(
            self.builds, self.diagnostics, headline, baseline_line(self.builds)
        )
        problem = github.append_summary(markdown, os.environ)
        if problem:
            terminalreporter.write_line(f"kbuild: {problem}", yellow=True)


# A grid cell's word and the colour pytest's terminal writer gives it.
_COLOURS = {"FAIL": "red", "ERROR": "red", "INTR": "yellow", "warn": "yellow", "pass": "green"}
_CELL_WORD = re.compile(r"(?<=\| )(FAIL|ERROR|INTR|warn|pass)\b")


def coloured(lines: list[str], tw: Any) -> list[str]:
    """The grid's *lines* with each cell's status word coloured, when pytest
    colours its output (the rows only: a header is a toolchain or kconfig)."""
    if not getattr(tw, "hasmarkup", False):
        return lines
    out, in_rows = [], False
    for line in lines:
        if in_rows and line and line != grid.LEGEND:
            line = _CELL_WORD.sub(lambda m: tw.markup(m[1], **{_COLOURS[m[1]]: True}), line)
        else:
            in_rows = line.startswith("-") and "-+-" in line
        out.append(line)
    return out


def baseline_totals(builds: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """New warnings and errors, fixed diagnostics, and the builds the baseline
    does not have, over every target of *builds*."""
    sums = {"new_warnings": 0, "new_errors": 0, "fixed": 0}
    absent: set[str] = set()
    for build_id, build in by_name(builds).items():
        for t in build["targets"].values():
            if t.get("baseline") == "build absent":
                absent.add(build_id)
            for k in sums:
                sums[k] += int(t.get(k, 0))
    return {**sums, "absent_builds": sorted(absent)}


def baseline_line(builds: Mapping[str, Mapping[str, Any]]) -> str:
    """``baseline: 2 new warnings, 0 new errors, 1 fixed; 1 build not in it: x``,
    or "" when no target was compared."""
    if not any("baseline" in t for b in builds.values() for t in b["targets"].values()):
        return ""
    s = baseline_totals(builds)
    line = f"baseline: {_n(s['new_warnings'], 'new warning')}, {_n(s['new_errors'], 'new error')}, "
    line += f"{s['fixed']} fixed"
    absent = s["absent_builds"]
    if absent:
        named = ", ".join(absent[:5]) + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
        line += f"; {len(absent)} build{'s' if len(absent) != 1 else ''} not in it: {named}"
    return line


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def cache_line(builds: Mapping[str, Mapping[str, Any]]) -> str:
    """``compiler cache: 95.1% hits (...)`` over every target of *builds*, or ""."""
    sums: dict[str, int] = {}
    for build in builds.values():
        for t in build["targets"].values():
            for k, v in t.get("cache", {}).items():
                sums[k] = sums.get(k, 0) + int(v)
    hits, misses = sums.get("hits", 0), sums.get("misses", 0)
    if not hits + misses:
        return ""
    return (
        f"compiler cache: {100 * hits / (hits + misses):.1f}% hits ({hits} hits: "
        f"{sums.get('local_hits', 0)} local, {sums.get('remote_hits', 0)} remote; "
        f"{misses} misses; {sums.get('remote_errors', 0)} remote errors)"
    )
