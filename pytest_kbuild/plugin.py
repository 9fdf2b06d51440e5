"""pytest hooks of pytest-kbuild: options, hook specs, configuration and
collection of matrix files. Everything else lives in the modules below."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Generator, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from . import hookspecs, runtime, transfer
from . import jobserver as jobservers
from . import shard as shards
from .errors import KbuildUserError
from .items import STATE, BuildItem, KbuildState, MatrixFile
from .reporting import ResultsReporter
from .results import METADATA, write_json
from .runtime.base import Runtime
from .scheduling import (
    CACHE_KEY,
    auto_workers,
    keep_builds_together,
    physical_memory,
    scope_weights,
)
from .settings import BY_NAME, OPTIONS, Settings, build_settings, from_wire, resolve, to_wire, where

WORKERINPUT_KEY = "kbuild"  # the controller's settings in an xdist worker's workerinput
REPORT_KEY = "kbuild_results"  # a remote worker's finished builds, on a report


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kbuild", "kernel build matrices (pytest-kbuild)")
    for opt in OPTIONS:
        action = "append" if opt.multiple else "store_true" if opt.flag else "store"
        group.addoption(
            opt.cli,
            action=action,
            dest=f"kbuild_{opt.name}",
            default=None,
            help=f"{opt.help} [env {opt.env}, ini {opt.ini}]",
        )
        parser.addini(opt.ini, help=opt.help, default=None)


def pytest_configure(config: pytest.Config) -> None:
    wire = getattr(config, "workerinput", {}).get(WORKERINPUT_KEY)
    state = _worker_state(config, wire) if wire is not None else _state(config)
    if state is None:
        return
    settings = state.settings
    config.stash[STATE] = state
    if settings.runtime:
        try:
            config.hook.pytest_kbuild_make_runtime(config=config, name=settings.runtime)
        except KbuildUserError as err:
            raise pytest.UsageError(f"--kbuild-runtime: {err}") from None
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No paths given: collect the matrices instead of testpaths/cwd.
        config.args = [str(m) for m in settings.matrices]
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(
            ResultsReporter(settings.results, settings.matrices, getattr(config, "cache", None)),
            "kbuild-results",
        )
    config.pluginmanager.register(RerunHooks(), "kbuild-rerun")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(config), "kbuild-xdist")
    if state.results_home is not None:
        config.pluginmanager.register(RemoteWorkerResults(state), "kbuild-remote-results")


def _state(config: pytest.Config) -> KbuildState | None:
    """The run's state from the options, environment and ini file; None without a matrix."""
    raw = {}
    try:
        for name, opt in BY_NAME.items():
            cli = config.getoption(f"kbuild_{name}")
            if opt.multiple and cli:
                cli = [p for value in cli for p in value.split(os.pathsep) if p]
            raw[name] = resolve(opt, cli, os.environ, config.getini(opt.ini))
        ini_dir = config.inipath.parent if config.inipath else config.rootpath
        settings = build_settings(raw, config.invocation_params.dir, ini_dir)
    except KbuildUserError as err:
        raise pytest.UsageError(str(err)) from None
    if not settings.matrices:
        return None
    try:
        # Only with a matrix: CI variables must not break unrelated test runs.
        shard = settings.shard or shards.from_environ(os.environ)
        durations: dict[str, float] = {}
        if settings.durations is not None:
            source = where(BY_NAME["durations"], raw["durations"][1])
            durations = shards.load_durations(settings.durations, source)
    except KbuildUserError as err:
        raise pytest.UsageError(str(err)) from None
    return KbuildState(
        settings,
        tuple(runtime.available()),
        shard=shard,
        durations=durations,
        jobserver=_jobserver(config, settings, raw),
    )


def _worker_state(config: pytest.Config, wire: Mapping[str, Any]) -> KbuildState:
    """An xdist worker's state: the controller's settings, not this machine's
    cwd, environment and ini file (a remote worker has none of them)."""
    settings = from_wire(wire["settings"])
    shard = shards.parse(wire["shard"], "workerinput") if wire["shard"] else None
    home = None
    if wire["remote"]:
        if str(config.rootpath) != wire["rootpath"]:
            # Node ids are relative to the rootdir: the controller would not
            # recognise this worker's items.
            raise pytest.UsageError(
                f"remote worker: rootdir {str(config.rootpath)!r} is not the controller's "
                f"{wire['rootpath']!r}; pass --rootdir={wire['rootpath']} (the same path "
                "must hold the matrices and the tree on the worker)"
            )
        # Written here, sent home build by build (RemoteWorkerResults).
        home = settings.results
        settings = replace(
            settings, results=Path(tempfile.mkdtemp(prefix="kbuild-results-")).resolve()
        )
    return KbuildState(
        settings,
        tuple(runtime.available()),
        shard=shard,
        durations=wire["durations"],
        results_home=home,
        jobserver=_jobserver(config, settings, {}),
    )


def _jobserver(
    config: pytest.Config, settings: Settings, raw: dict[str, tuple[Any, str]]
) -> jobservers.JobserverInfo | None:
    """The run's jobserver: made here on the controller (removed at the end),
    handed to the workers by XdistHooks.pytest_configure_node."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        data = workerinput.get(jobservers.WORKERINPUT_KEY)
        return jobservers.JobserverInfo.from_json(data) if data else None
    mode = settings.jobserver
    workers = _local_workers(config)
    if mode not in ("auto", "off"):
        opt = where(BY_NAME["jobserver"], raw["jobserver"][1])
        if settings.jobs is not None:
            jobs = where(BY_NAME["jobs"], raw["jobs"][1])
            raise pytest.UsageError(
                f"{opt}={mode} and {jobs}={settings.jobs} both set: the jobserver replaces "
                "make -j per build; set one of them"
            )
        if workers is None:
            raise pytest.UsageError(
                f"{opt}={mode}: xdist workers on other machines (--tx) cannot reach this "
                "machine's jobserver FIFO; use --kbuild-jobserver=off"
            )
    slots = jobservers.slots_for(
        mode,
        workers=workers or 0,
        cpus=os.cpu_count() or 1,
        jobs_given=settings.jobs is not None,
    )
    if slots is None:
        return None
    server = jobservers.Jobserver(slots, str(mode))
    config.add_cleanup(server.close)
    return server.info


def _local_workers(config: pytest.Config) -> int | None:
    """How many xdist workers this run starts (0 without xdist), or None if
    some run on other machines."""
    if config.getoption("dist", "no") == "no":
        return 0
    count = 0
    for spec in config.getoption("tx", None) or []:
        n, star, rest = str(spec).partition("*")
        if not star:
            n, rest = "1", spec
        if not rest.startswith("popen"):
            return None
        count += int(n) if n.isdigit() else 1
    return count


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(STATE, None)
    if state is None or state.jobserver is None:
        return None
    js = state.jobserver
    return f"kbuild jobserver: {js.slots} slots shared by all builds ({js.mode}; {js.path})"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> MatrixFile | None:
    state = parent.config.stash.get(STATE, None)
    if state is not None and file_path.resolve() in state.settings.matrices:
        return MatrixFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: shard the whole collected matrix before -k/-m deselect, so
    # that the selection never moves a build to another shard. Whole builds
    # only: the targets of a build share its build directory.
    state = config.stash.get(STATE, None)
    if state is None or state.shard is None:
        return
    builds = {i.parent.nodeid: i.parent.spec for i in items if isinstance(i, BuildItem)}
    mine = shards.plan(shards.weights(builds.items(), state.durations), state.shard).scopes
    keep = [i for i in items if not isinstance(i, BuildItem) or i.parent.nodeid in mine]
    if len(keep) < len(items):
        kept = set(map(id, keep))
        config.hook.pytest_deselected(items=[i for i in items if id(i) not in kept])
        items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionstart(session: pytest.Session) -> Iterator[None]:
    # A wrapper, to come after pytest's header, and whatever the verbosity:
    # it says what this machine builds. Workers say nothing; their controller does.
    yield
    state = session.config.stash.get(STATE, None)
    if state is None or state.shard is None or hasattr(session.config, "workerinput"):
        return
    # From the matrix files, not the items: under xdist the controller
    # collects nothing (the workers deselect), so the items are not here.
    s = state.settings
    builds = shards.matrix_builds(s.matrices, session.config.rootpath, s.tree, state.runtimes)
    state.shard_plan = shards.plan(shards.weights(builds, state.durations), state.shard)
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.write_line(state.shard_plan.line())


def pytest_sessionfinish(session: pytest.Session) -> None:
    # A shard left without builds (more shards than builds) did its part:
    # that is not pytest's "no tests collected" failure.
    state = session.config.stash.get(STATE, None)
    plan = state.shard_plan if state is not None else None
    if (
        plan is not None
        and not plan.scopes
        and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED
    ):
        session.exitstatus = pytest.ExitCode.OK


@pytest.hookimpl(trylast=True)
def pytest_kbuild_make_runtime(config: pytest.Config, name: str) -> Runtime:
    s = config.stash[STATE].settings
    options = runtime.ContainerOptions(image=s.image, pull=s.pull, network=s.network)
    return runtime.make(name, options=options)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    # Runs before pytest_configure, so resolve the raw settings here; a bad
    # value is left for pytest_configure to report.
    def setting(name: str) -> Any:
        opt = BY_NAME[name]
        cli = config.getoption(f"kbuild_{opt.name}")
        return resolve(opt, cli, os.environ, config.getini(opt.ini))[0]

    try:
        if not setting("matrix"):
            return None
        shared = setting("jobserver") != "off" and setting("jobs") is None
    except KbuildUserError:
        return None
    return auto_workers(os.cpu_count() or 1, physical_memory(), shared_budget=shared)


LASTFAILED = "cache/lastfailed"  # pytest's cacheprovider keeps --lf's node ids here


class RerunHooks:
    """--lf and --ff with builds: whole builds in dependency order, and the
    targets a failed dependency skipped count as failed for the next --lf."""

    def __init__(self) -> None:
        self.blocked: set[str] = set()

    # Registered in pytest_configure, after the cacheprovider's --lf/--ff
    # plugin: as the outer tryfirst wrapper, this runs after its reordering.
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Iterator[None]:
        yield
        # --ff puts failed targets before their build's config; a build whose
        # items are apart is torn down (its build directory removed) between them.
        items[:] = keep_builds_together(
            items,
            lambda i: i.parent.nodeid if isinstance(i, BuildItem) else None,
            lambda i: i.parent.spec.targets.index(i.name) if isinstance(i, BuildItem) else 0,
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and "blocked_by" in dict(report.user_properties):
            self.blocked.add(report.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # trylast: after the cacheprovider saved this run's failures, which
        # forgets skipped items. A target skipped because its dependency
        # failed has not passed: the next --lf must build it too.
        cache = getattr(session.config, "cache", None)
        if cache is None or not self.blocked or hasattr(session.config, "workerinput"):
            return
        cache.set(LASTFAILED, {**cache.get(LASTFAILED, {}), **dict.fromkeys(self.blocked, True)})


class XdistHooks:
    """Registered only when pytest-xdist is installed and a matrix is given."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

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
        results = self.config.stash[STATE].settings.results
        for data in sent:
            folder = transfer.unpack(data, results)
            if data["left"]:
                _note_left_on_worker(folder, data)

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # All targets of one build go to one worker, in dependency order,
        # longest builds first (remembered durations, else estimates).
        if config.getvalue("dist") != "load":
            return None
        from .xdist_scheduler import BuildScheduling

        cache = getattr(config, "cache", None)  # absent with -p no:cacheprovider
        remembered = cache.get(CACHE_KEY, {}) if cache is not None else {}
        paths = config.stash[STATE].settings.matrices
        weights = scope_weights(paths, config.rootpath, remembered)
        # --ff: each worker collects the failed builds first, but the
        # scheduler hands out builds by weight; it must put them first.
        first: set[str] = set()
        if cache is not None and config.getoption("failedfirst", False):
            first = {nodeid.rsplit("::", 1)[0] for nodeid in cache.get(LASTFAILED, {})}
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
            results = self.state.settings.results
            report.__dict__[REPORT_KEY] = [
                transfer.pack(results, self.state.builds[b].output_dir) for b in self.state.finished
            ]
            self.state.finished.clear()
        return report

    def pytest_unconfigure(self) -> None:
        shutil.rmtree(self.state.settings.results, ignore_errors=True)


def _note_left_on_worker(folder: Path, data: Mapping[str, Any]) -> None:
    """Say in metadata.json which artifacts were too big to send home."""
    meta_path = folder / METADATA
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return
    meta["left_on_worker"] = {
        "host": meta.get("host", {}).get("hostname"),
        "files": data["left"],
        "limit_bytes": transfer.MAX_FILE_BYTES,
    }
    write_json(meta_path, meta)
