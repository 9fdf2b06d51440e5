"""pytest hooks of pytest-kbuild (the pytest11 entry point): options, hook
specs, configuration and collection of matrix files; thin.

Only options.py, hookspecs.py and keys.py are imported at start-up: without
a matrix, pytest starts as fast as without the plugin. The run state, items
and xdist support are imported in pytest_configure (configure.py) when a
matrix is given.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .. import hookspecs
from ..errors import KbuildUserError
from ..options import BY_NAME, OPTIONS
from ..settings import resolve
from .ini import addini, getini
from .keys import STATE, SWEPT, WORKERINPUT_KEY

if TYPE_CHECKING:
    from ..runtime.base import Runtime
    from .items import MatrixFile


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
        addini(parser, opt)


# `pytest --markers` documents it; BuildNode.collect adds it to every item.
MARKER = (
    "kbuild(arch, toolchain, kconfig, target, build_id): a build target of a "
    "--kbuild-matrix, added by pytest-kbuild; select exactly with "
    "-m \"kbuild(arch='arm64', target='modules')\" (pytest >= 8.3)"
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
    wire = getattr(config, "workerinput", {}).get(WORKERINPUT_KEY)
    if wire is None and not _matrix_given(config):
        return
    from .configure import configure

    configure(config, wire)


def _matrix_given(config: pytest.Config) -> bool:
    """Whether a matrix is named anywhere (option, environment, ini); a bad
    value counts, so that controller_state() reports it."""
    opt = BY_NAME["matrix"]
    try:
        ini = getini(config, opt)
    except KbuildUserError:
        return True
    return bool(config.getoption(f"kbuild_{opt.name}") or os.environ.get(opt.env) or ini)


def pytest_report_header(config: pytest.Config) -> str | None:
    state = config.stash.get(STATE, None)
    if state is None or state.jobserver is None:
        return None
    js = state.jobserver
    return f"kbuild jobserver: {js.slots} slots shared by all builds ({js.mode}; {js.path})"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> MatrixFile | None:
    state = parent.config.stash.get(STATE, None)
    if state is not None and file_path.resolve() in state.settings.run.matrix:
        from .items import MatrixFile

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
    from ..run import shard as shards
    from .items import BuildItem

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
    # it says which dead runs' dirs were removed and what this machine
    # builds. Workers say nothing; their controller does.
    yield
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    for line in session.config.stash.get(SWEPT, []):  # controller only
        if terminal is not None:
            terminal.write_line(f"kbuild: {line}")
    state = session.config.stash.get(STATE, None)
    if state is None or state.shard is None or hasattr(session.config, "workerinput"):
        return
    from ..run import shard as shards

    # From the matrix files, not the items: under xdist the controller
    # collects nothing (the workers deselect), so the items are not here.
    builds = state.builds_by_scope(session.config.rootpath)
    state.shard_plan = shards.plan(shards.weights(builds, state.durations), state.shard)
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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    infra_error = getattr(item, "infra_error", None)  # a BuildItem's (items.py)
    if call.when == "call" and infra_error is not None and infra_error(call.excinfo):
        # The machine broke the target (timeout, OOM kill, full disk): a pytest
        # error and a JUnit <error>, as a missing compiler is in setup, not a
        # failure of the kernel.
        report.when = "setup"
    if call.when == "call":
        # A target's time (JUnit's, --durations') is the time it ran: its
        # waits for jobserver slots, while other builds held them, are apart.
        queued = dict(report.user_properties).get("queued", 0.0)
        if isinstance(queued, float | int):
            report.duration = max(0.0, report.duration - queued)
    return report


@pytest.hookimpl(trylast=True)
def pytest_kbuild_make_runtime(config: pytest.Config, name: str) -> Runtime | None:
    """The built-in runtimes (local/null, podman, docker); None for others."""
    from .. import runtime

    if name not in runtime.RUNTIMES:
        return None
    b = config.stash[STATE].settings.build
    options = runtime.ContainerOptions(image=b.image, pull=b.pull, network=b.network)
    return runtime.make(name, options=options)


# tryfirst: xdist's own implementation answers this firstresult hook too;
# which one is asked first would otherwise depend on the order pytest loads
# the two plugins (the order of site-packages).
@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    # Runs before pytest_configure, so resolve the raw settings here; a bad
    # value is left for pytest_configure to report.
    def setting(name: str) -> Any:
        opt = BY_NAME[name]
        cli = config.getoption(f"kbuild_{opt.name}")
        return resolve(opt, cli, os.environ, getini(config, opt))[0]

    try:
        if not setting("matrix"):
            return None
        shared = setting("jobserver") != "off" and setting("jobs") is None
    except KbuildUserError:
        return None
    from ..run.scheduling import auto_workers, physical_memory

    return auto_workers(os.cpu_count() or 1, physical_memory(), shared_budget=shared)
