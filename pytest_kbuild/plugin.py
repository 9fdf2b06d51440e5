"""pytest hooks of pytest-kbuild: options, hook specs, configuration and
collection of matrix files. Everything else lives in the modules below."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from . import hookspecs, runtime
from .errors import KbuildUserError
from .items import STATE, KbuildState, MatrixFile
from .reporting import ResultsReporter
from .runtime.base import Runtime
from .scheduling import CACHE_KEY, scope_weights
from .settings import BY_NAME, OPTIONS, build_settings, resolve


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
    if settings.runtime:
        try:
            config.hook.pytest_kbuild_make_runtime(config=config, name=settings.runtime)
        except KbuildUserError as err:
            raise pytest.UsageError(f"--kbuild-runtime: {err}") from None
    config.stash[STATE] = KbuildState(settings, tuple(runtime.available()))
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


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> MatrixFile | None:
    state = parent.config.stash.get(STATE, None)
    if state is not None and file_path.resolve() in state.settings.matrices:
        return MatrixFile.from_parent(parent, path=file_path)
    return None


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
