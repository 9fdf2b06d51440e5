"""pytest hooks of pytest-kbuild: options, hook specs, configuration and
collection of matrix files. Everything else lives in the modules below."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hookspecs, runtime
from . import jobserver as jobservers
from . import shard as shards
from .errors import KbuildUserError
from .items import STATE, BuildItem, KbuildState, MatrixFile
from .reporting import ResultsReporter
from .runtime.base import Runtime
from .scheduling import CACHE_KEY, scope_weights
from .settings import BY_NAME, OPTIONS, Settings, build_settings, resolve, where


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
        return
    try:
        # Only with a matrix: CI variables must not break unrelated test runs.
        shard = settings.shard or shards.from_environ(os.environ)
        durations: dict[str, float] = {}
        if settings.durations is not None:
            source = where(BY_NAME["durations"], raw["durations"][1])
            durations = shards.load_durations(settings.durations, source)
    except KbuildUserError as err:
        raise pytest.UsageError(str(err)) from None
    if settings.runtime:
        try:
            config.hook.pytest_kbuild_make_runtime(config=config, name=settings.runtime)
        except KbuildUserError as err:
            raise pytest.UsageError(f"--kbuild-runtime: {err}") from None
    config.stash[STATE] = KbuildState(
        settings,
        tuple(runtime.available()),
        shard=shard,
        durations=durations,
        jobserver=_jobserver(config, settings, raw),
    )
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No paths given: collect the matrices instead of testpaths/cwd.
        config.args = [str(m) for m in settings.matrices]
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(
            ResultsReporter(settings.results, settings.matrices, getattr(config, "cache", None)),
            "kbuild-results",
        )
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(), "kbuild-xdist")


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
    return runtime.make(name)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    # Runs before pytest_configure, so look at the raw setting. One worker
    # per two CPUs: each build keeps make -j2, and a build's serial phases
    # (Kconfig, linking) leave the other CPU to a second build.
    opt = BY_NAME["matrix"]
    if not (
        config.getoption(f"kbuild_{opt.name}") or os.environ.get(opt.env) or config.getini(opt.ini)
    ):
        return None
    return max(1, (os.cpu_count() or 1) // 2)


class XdistHooks:
    """Registered only when pytest-xdist is installed and a matrix is given."""

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
        return BuildScheduling(config, log, weights)

    def pytest_configure_node(self, node: Any) -> None:
        state = node.config.stash.get(STATE, None)
        if state is not None and state.jobserver is not None:
            node.workerinput[jobservers.WORKERINPUT_KEY] = state.jobserver.to_json()
