"""What a run with a matrix sets up at pytest_configure: the run state, the
results lock, and the plugin objects it needs, each registered only when
needed (as pytest's junitxml.py registers LogXML). hooks.py imports this
module only when a matrix is given, or on an xdist worker."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ..errors import KbuildUserError
from ..results import Scope
from ..run import signals
from .keys import STATE, SWEPT
from .state import KbuildState, controller_state, worker_state


def configure(config: pytest.Config, wire: Mapping[str, Any] | None) -> None:
    """Make the run's state (from *wire*, the controller's settings, on an
    xdist worker) and register what the run needs."""
    state = worker_state(config, wire) if wire is not None else controller_state(config)
    if state is None:
        return
    config.stash[STATE] = state
    override = state.settings.run.runtime
    if override:
        try:
            state.make_runtime(config, override)
        except KbuildUserError as err:
            raise pytest.UsageError(f"{state.settings.where('runtime')}: {err}") from None
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No paths given: collect the matrices instead of testpaths/cwd.
        config.args = [str(m) for m in state.settings.run.matrix]
    if not hasattr(config, "workerinput"):
        _controller(config, state)
    # In the order the hooks were always registered (pluggy calls the last
    # registered first among equals).
    _rerun_and_progress(config, state)
    _signals(config)
    _reports(config, state)


def _controller(config: pytest.Config, state: KbuildState) -> None:
    """The process that reports: one run per results dir, the dead runs'
    temporary dirs swept, results.json and the reports."""
    from ..report import kcidb
    from ..report.html import REPORT
    from ..run import runlock, tempdirs
    from .reporting import ResultsReporter

    run = state.settings.run
    if not config.option.collectonly:
        # One run per results dir, held until the run ends (run/runlock.py).
        try:
            lock = runlock.acquire(run.results, state.settings.where("results"))
        except KbuildUserError as err:
            raise pytest.UsageError(str(err)) from None
        config.add_cleanup(lock.release)
        # What a run killed with SIGKILL left in the temporary root.
        config.stash[SWEPT] = [stale.line() for stale in tempdirs.sweep()]
    given = config.option.xmlpath or state.settings.sources.get("results") != "default"
    root = config.rootpath
    reporter = ResultsReporter(
        run.results,
        run.matrix,
        getattr(config, "cache", None),
        run.codequality,
        run.sarif,
        state.settings.build.baseline,
        run.html or (run.results / REPORT if given else None),
        lambda: [(Scope.parse(s).matrix, b) for s, b in state.builds_by_scope(root)],
        kcidb=kcidb.Destination(run.kcidb, run.kcidb_origin, run.kcidb_base_url)
        if run.kcidb
        else None,
    )
    config.pluginmanager.register(reporter, "kbuild-results")


def _rerun_and_progress(config: pytest.Config, state: KbuildState) -> None:
    """--lf/--ff keep builds whole; progress lines unless -q."""
    from .rerun import RerunHooks

    run = state.settings.run
    config.pluginmanager.register(RerunHooks(), "kbuild-rerun")
    if run.progress and config.option.verbose >= 0 and not config.option.collectonly:
        from .progress import ProgressHooks

        config.pluginmanager.register(ProgressHooks(config, run.progress), "kbuild-progress")


def _reports(config: pytest.Config, state: KbuildState) -> None:
    """JUnit, test cases and xdist: on every process."""
    from .cases import CaseReports
    from .junit import JunitHooks

    run = state.settings.run
    config.pluginmanager.register(JunitHooks(config, run.matrix, run.results), "kbuild-junit")
    config.pluginmanager.register(CaseReports(config), "kbuild-cases")
    if config.pluginmanager.hasplugin("xdist"):
        from .xdist import RemoteWorkerResults, XdistHooks

        config.pluginmanager.register(XdistHooks(config), "kbuild-xdist")
        if state.results_home is not None:
            config.pluginmanager.register(RemoteWorkerResults(state), "kbuild-remote-results")


def _signals(config: pytest.Config) -> None:
    """SIGTERM (a CI job cancelled or timed out) interrupts as Ctrl-C does:
    builds stop and are INTERRUPTED, JUnit and results are written."""
    worker = hasattr(config, "workerinput")
    if worker:
        signals.restore_sigint()  # how the controller stops this worker
    if signals.install():
        from .sigterm import SigtermHooks

        config.pluginmanager.register(SigtermHooks(), "kbuild-sigterm")
        # An xdist controller: its workers (children) build; they stop at once.
        signals.forward_to_children(not worker and config.getoption("dist", "no") != "no")
        config.add_cleanup(signals.uninstall)
