"""The run state of one pytest process (controller or worker), kept in the
config stash: resolved settings, the runtime registry, the matrices loaded
once, the builds made so far and the shard and jobserver of the run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from .. import matrix as matrices
from ..build.build import Build
from ..diagnostics import baseline as baselines
from ..errors import KbuildUserError, UnknownRuntime
from ..matrix import Matrix
from ..options import BY_NAME
from ..parsers import Shard
from ..results import Scope
from ..run import jobserver as jobservers
from ..run import shard as shards
from ..run import tempdirs
from ..run.jobserver import JobserverInfo
from ..run.shard import ShardPlan
from ..runtime import Registry
from ..runtime.base import Runtime
from ..settings import Settings, build_settings, from_wire, resolve
from ..spec import BuildSpec
from .ini import getini


@dataclass
class KbuildState:
    """Run-wide state of one pytest process."""

    settings: Settings
    runtimes: Registry
    builds: dict[str, Build] = field(default_factory=dict)
    shard: Shard | None = None  # --kbuild-shard, else from the CI's variables
    durations: Mapping[str, float] = field(default_factory=dict)  # --kbuild-durations
    shard_plan: ShardPlan | None = None  # this shard's builds, on the controller
    # A remote xdist worker writes into a results dir of its own and sends
    # each finished build home: the controller's dir, shown in messages.
    results_home: Path | None = None
    finished: list[str] = field(default_factory=list)  # builds done, not yet sent home
    jobserver: JobserverInfo | None = None  # the run's shared make jobserver, if on
    # Each matrix is read once per process: collection, the xdist scheduler
    # and the shard plan all use this (a KbuildUserError is kept, not raised twice).
    _matrices: dict[Path, Matrix | KbuildUserError] = field(default_factory=dict)

    def matrix(self, path: Path) -> Matrix:
        """The matrix at *path*, loaded on first use; raises its KbuildUserError."""
        path = path.resolve()
        if path not in self._matrices:
            try:
                self._matrices[path] = matrices.load(
                    path,
                    self.settings.run.tree,
                    self.runtimes,
                    tree_where=self.tree_where,
                    jobs=self.settings.run.plan_job,
                )
            except KbuildUserError as err:
                self._matrices[path] = err
        loaded = self._matrices[path]
        if isinstance(loaded, KbuildUserError):
            raise loaded
        return loaded

    @property
    def tree_where(self) -> str:
        return self.settings.where("tree")

    def builds_by_scope(self, rootpath: Path) -> list[tuple[str, BuildSpec]]:
        """Every build of the run's matrices with its scope (its node id,
        ``<matrix relative to rootpath>::<build id>``). A matrix that does not
        load is left out: collecting it reports why."""
        out: list[tuple[str, BuildSpec]] = []
        for path in self.settings.run.matrix:
            try:
                m = self.matrix(path)
            except KbuildUserError:
                continue
            rel = os.path.relpath(path, rootpath)
            out += [(str(Scope(rel, spec.id)), self.effective(spec)) for spec in m.builds]
        return out

    def effective(self, spec: BuildSpec) -> BuildSpec:
        """*spec* as this run builds it (--kbuild-runtime overrides its runtime)."""
        override = self.settings.run.runtime
        if override and override != spec.runtime:
            return replace(spec, runtime=override)
        return spec

    def make_runtime(self, config: pytest.Config, name: str) -> Runtime:
        """The runtime called *name*, from the first plugin that answers."""
        rt: Runtime | None = config.hook.pytest_kbuild_make_runtime(config=config, name=name)
        if rt is None:
            raise UnknownRuntime(name, self.runtimes)
        return rt

    def shown(self, path: Path) -> Path:
        """*path* (under this process's results dir) as the user will find it."""
        if self.results_home is None:
            return path
        return self.results_home / path.relative_to(self.settings.run.results)


__all__ = ["KbuildState"]


def registry(config: pytest.Config) -> Registry:
    """The runtime names of this run: built-in, and those plugins answer."""

    def ask(name: str) -> bool:
        answer: Any = config.hook.pytest_kbuild_make_runtime(config=config, name=name)
        return answer is not None

    return Registry(ask)


def check_baseline(settings: Settings) -> None:
    """Read --kbuild-baseline once, so a baseline that cannot be read is bad
    input of the run, found before any build (Build reads it again from the
    cache; kbuild's Build reads it itself)."""
    if settings.build.baseline is not None:
        baselines.load(settings.build.baseline, settings.where("baseline"))


def controller_state(config: pytest.Config) -> KbuildState | None:
    """The run's state from the options, environment and ini file; None without a matrix."""
    raw = {}
    try:
        for name, opt in BY_NAME.items():
            cli = config.getoption(f"kbuild_{name}")
            if opt.multiple and cli:
                given = [p for value in cli for p in value.split(os.pathsep) if p]
                if not given:  # --kbuild-matrix= is a mistake, not "no matrix"
                    raise KbuildUserError(f"{opt.cli}: empty value")
                cli = given
            raw[name] = resolve(opt, cli, os.environ, getini(config, opt))
        ini_dir = config.inipath.parent if config.inipath else config.rootpath
        settings = build_settings(raw, config.invocation_params.dir, ini_dir)
        check_baseline(settings)
    except KbuildUserError as err:
        raise pytest.UsageError(str(err)) from None
    if not settings.run.matrix:
        return None
    try:
        # Only with a matrix: CI variables must not break unrelated test runs.
        shard = settings.run.shard or shards.from_environ(os.environ)
        durations: dict[str, float] = {}
        if settings.run.durations is not None:
            source = settings.where("durations")
            durations = shards.load_durations(settings.run.durations, source)
    except KbuildUserError as err:
        raise pytest.UsageError(str(err)) from None
    return KbuildState(
        settings,
        registry(config),
        shard=shard,
        durations=durations,
        jobserver=_jobserver(config, settings),
    )


def worker_state(config: pytest.Config, wire: Mapping[str, Any]) -> KbuildState:
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
        home = settings.run.results
        results = tempdirs.make("results", "kbuild-results-").resolve()
        settings = replace(settings, run=replace(settings.run, results=results))
    return KbuildState(
        settings,
        registry(config),
        shard=shard,
        durations=wire["durations"],
        results_home=home,
        jobserver=_jobserver(config, settings),
    )


def _jobserver(config: pytest.Config, settings: Settings) -> jobservers.JobserverInfo | None:
    """The run's jobserver: made here on the controller (removed at the end),
    handed to the workers by XdistHooks.pytest_configure_node."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        data = workerinput.get(jobservers.WORKERINPUT_KEY)
        return jobservers.JobserverInfo.from_json(data) if data else None
    mode, jobs_set = settings.run.jobserver, settings.build.jobs
    workers = _local_workers(config)
    if mode not in ("auto", "off"):
        opt = settings.where("jobserver")
        if jobs_set is not None:
            jobs = settings.where("jobs")
            raise pytest.UsageError(
                f"{opt}={mode} and {jobs}={jobs_set} both set: the jobserver replaces "
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
        jobs_given=jobs_set is not None,
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
