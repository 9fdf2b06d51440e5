"""pytest-xdist: the build-aware scheduler, the controller's settings and
jobserver for every worker, and remote workers' results sent home.

Imported only when pytest-xdist is installed (hooks.py checks)."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Collection, Generator, Mapping
from typing import Any

import pytest
from _pytest.reports import CollectErrorRepr
from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

from ..build import crash
from ..build.record import note_left_on_worker
from ..errors import KbuildUserError
from ..results import Scope, scope_of
from ..run import jobserver as jobservers
from ..run import tempdirs, transfer
from ..run.scheduling import CACHE_KEY, queue_order, scope_weights
from ..settings import to_wire
from .keys import STATE, WORKERINPUT_KEY
from .rerun import LASTFAILED
from .state import KbuildState

REPORT_KEY = "kbuild_results"  # a remote worker's finished builds, on a report


class XdistHooks:
    """Registered only when pytest-xdist is installed and a matrix is given."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> None:
        # The xdist controller collects nothing: a matrix that does not load
        # would only surface as the workers' reports, with another exit
        # status. Report it here as a collection error of its file, as a
        # run without -n does, and stop the same way (exit 2).
        if hasattr(self.config, "workerinput") or self.config.getoption("dist") == "no":
            return
        state = self.config.stash[STATE]
        errors = 0
        for path in state.settings.run.matrix:
            try:
                state.matrix(path)
            except KbuildUserError as err:
                nodeid = os.path.relpath(path, self.config.rootpath)
                # The representation pytest gives a CollectError, so that the
                # summary line reads as without -n.
                report = pytest.CollectReport(nodeid, "failed", CollectErrorRepr(str(err)), [])
                self.config.hook.pytest_collectreport(report=report)
                errors += 1
        if errors and not self.config.option.continue_on_collection_errors:
            plural = "s" if errors != 1 else ""
            raise session.Interrupted(f"{errors} error{plural} during collection")

    def pytest_configure_node(self, node: Any) -> None:
        # The controller's settings for every worker: a remote one has
        # neither its cwd nor its environment nor its ini file.
        state = self.config.stash[STATE]
        node.workerinput[WORKERINPUT_KEY] = {
            "settings": to_wire(state.settings),
            "shard": str(state.shard) if state.shard else None,
            "durations": dict(state.durations),
            "remote": not node.gateway.spec.popen,  # socket=, ssh=: another filesystem
            "rootpath": str(self.config.rootpath),
        }
        if state.jobserver is not None:
            node.workerinput[jobservers.WORKERINPUT_KEY] = state.jobserver.to_json()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # tryfirst: write the files, then drop them from the report, which
        # other plugins keep until the end of the run.
        if hasattr(self.config, "workerinput"):
            return  # the worker's own report, still to be sent with the files
        sent = report.__dict__.pop(REPORT_KEY, None)
        if not sent:
            return
        results = self.config.stash[STATE].settings.run.results
        for data in sent:
            folder = transfer.unpack(data, results)
            if data["left"]:
                note_left_on_worker(folder, data["left"], transfer.MAX_FILE_BYTES)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        # A worker died while building (kill -9, OOM killer): stop its make,
        # remove its temporary build dir, and report the target once, as an
        # ERROR of the machine; the targets that had not run are skipped.
        if not isinstance(sched, BuildScheduling):
            return
        state = self.config.stash[STATE]
        scope, target = Scope.of_item(crashitem)
        spec = dict(state.builds_by_scope(self.config.rootpath)).get(str(scope))
        if spec is None:
            return
        worker = getattr(getattr(report, "node", None), "gateway", None)
        who = f"xdist worker {worker.id}" if worker is not None else "an xdist worker"
        why = f"{who} crashed while building {target} (killed by a signal or out of memory)"
        skipped = [Scope.of_item(n)[1] for n in sched.abandoned.pop(crashitem, [])]
        folder = scope.folder(state.settings.run.results)
        local = worker is None or bool(worker.spec.popen)
        done = crash.record(folder, target, skipped, why) if local else ""
        props = [
            ("arch", spec.arch),
            ("toolchain", spec.toolchain),
            ("kconfig", spec.kconfig),
            ("build_id", spec.id),
        ]
        fspath = scope.matrix
        report.location = (fspath, spec.line - 1 if spec.line else None, f"{spec.id}::{target}")
        report.when = "setup"  # a pytest error, JUnit <error>: not the kernel's failure
        report.longrepr = f"{spec.id}::{target} ERROR: {why}" + (f"; {done}" if done else "")
        report.user_properties = [
            *props,
            ("target", target),
            ("status", "ERROR"),
            ("first_error", why),
        ]
        for name in skipped:
            reason = f"the build stopped at {target}: {why}"
            skip = pytest.TestReport(
                scope.item(name),
                (fspath, None, f"{spec.id}::{name}"),
                {},
                "skipped",
                (fspath, spec.line, f"Skipped: {reason}"),
                "setup",
                user_properties=[*props, ("target", name), ("status", "SKIP")],
            )
            skip.node = report.node  # type: ignore[attr-defined]
            self.config.hook.pytest_runtest_logreport(report=skip)

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # All targets of one build go to one worker, in dependency order,
        # longest builds first (remembered durations, else estimates).
        if config.getvalue("dist") != "load":
            return None
        cache = getattr(config, "cache", None)  # absent with -p no:cacheprovider
        remembered = cache.get(CACHE_KEY, {}) if cache is not None else {}
        builds = config.stash[STATE].builds_by_scope(config.rootpath)
        weights = scope_weights(builds, remembered)
        # --ff: each worker collects the failed builds first, but the
        # scheduler hands out builds by weight; it must put them first.
        first: set[str] = set()
        if cache is not None and config.getoption("failedfirst", False):
            first = {scope_of(nodeid) for nodeid in cache.get(LASTFAILED, {})}
        return BuildScheduling(config, log, weights, first)


class RemoteWorkerResults:
    """On a remote xdist worker: sends each finished build's results folder
    home with the report of its last item's teardown."""

    def __init__(self, state: KbuildState) -> None:
        self.state = state

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "teardown" and self.state.finished:
            results = self.state.settings.run.results
            report.__dict__[REPORT_KEY] = [
                transfer.pack(results, self.state.builds[b].output_dir) for b in self.state.finished
            ]
            self.state.finished.clear()
        return report

    def pytest_unconfigure(self) -> None:
        tempdirs.remove(self.state.settings.run.results)


class BuildScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """LoadScope grouping by build (``m.yaml::<build id>``: the node id up to
    the last ``::``), handing out the heaviest builds first.

    *weights* maps a scope to its expected seconds; unknown scopes (plain
    tests in the same run) weigh nothing and keep collection order. Scopes
    in *first* (the builds that failed last time, with --ff) go before all
    others, heaviest first among themselves.
    """

    workqueue: OrderedDict[str, dict[str, bool]]

    def __init__(
        self, config: Any, log: Any, weights: Mapping[str, float], first: Collection[str] = ()
    ) -> None:
        super().__init__(config, log)
        self._weights = dict(weights)
        self._first = frozenset(first)
        self._ordered = False
        # A crashed item -> the targets of its build that had not run: the
        # build is not handed to another worker (its first try is the result).
        self.abandoned: dict[str, list[str]] = {}

    def remove_node(self, node: Any) -> str | None:
        """As LoadScope's, except for the build that was running when *node*
        died: xdist would queue it again whole, so the crashed target ran
        twice and was reported twice (7 results for 6 items). That build
        stops there; its other unfinished builds go back in the queue."""
        workload: dict[str, dict[str, bool]] = self.assigned_work.pop(node)
        unfinished = [(scope, unit) for scope, unit in workload.items() if not all(unit.values())]
        if not unfinished:
            return None
        (_, running), rest = unfinished[0], unfinished[1:]
        crashed = next(nodeid for nodeid, done in running.items() if not done)
        self.abandoned[crashed] = [n for n, done in running.items() if not done and n != crashed]
        self.workqueue.update(rest)
        for other in self.assigned_work:
            self._reschedule(other)
        return crashed

    def _assign_work_unit(self, node: Any) -> None:
        if not self._ordered and self.workqueue:
            # The queue is complete once the first unit is handed out:
            # reorder it once, heaviest first, ties by scope name.
            scopes = queue_order(self.workqueue, self._weights, self._first)
            rank = {s: i for i, s in enumerate(scopes)}
            self.workqueue = OrderedDict(sorted(self.workqueue.items(), key=lambda kv: rank[kv[0]]))
            self._ordered = True
        super()._assign_work_unit(node)
