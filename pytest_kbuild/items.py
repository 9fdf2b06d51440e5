"""pytest collection nodes: MatrixFile -> BuildNode (one build) -> BuildItem
(one target)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from . import logscan
from . import matrix as matrices
from .build import Build
from .errors import KbuildError, KbuildInfraError, KbuildUserError
from .jobserver import JobserverInfo
from .results import BUILD_LOG, Status, TargetResult
from .settings import Settings
from .shard import Shard, ShardPlan
from .targets import Target, with_dependencies


@dataclass
class KbuildState:
    """Run-wide state of one pytest process, kept in the config stash."""

    settings: Settings
    runtimes: tuple[str, ...]
    builds: dict[str, Build] = field(default_factory=dict)
    shard: Shard | None = None  # --kbuild-shard, else from the CI's variables
    durations: Mapping[str, float] = field(default_factory=dict)  # --kbuild-durations
    shard_plan: ShardPlan | None = None  # this shard's builds, on the controller
    # A remote xdist worker writes into a results dir of its own and sends
    # each finished build home: the controller's dir, shown in messages.
    results_home: Path | None = None
    finished: list[str] = field(default_factory=list)  # builds done, not yet sent home

    jobserver: JobserverInfo | None = None  # the run's shared make jobserver, if on

    def shown(self, path: Path) -> Path:
        """*path* (under this process's results dir) as the user will find it."""
        if self.results_home is None:
            return path
        return self.results_home / path.relative_to(self.settings.results)


STATE = pytest.StashKey[KbuildState]()


class MatrixFile(pytest.File):
    """A matrix YAML file given with --kbuild-matrix."""

    def collect(self) -> Iterator[BuildNode]:
        state = self.config.stash[STATE]
        try:
            matrix = matrices.load(self.path, state.settings.tree, state.runtimes)
        except KbuildUserError as err:
            raise self.CollectError(str(err)) from None
        for spec in matrix.builds:
            if state.settings.runtime:
                spec = replace(spec, runtime=state.settings.runtime)
            yield BuildNode.from_parent(self, name=spec.id, spec=spec, tree=matrix.tree)


class BuildNode(pytest.Collector):
    """One build of the matrix; its items are the targets, in build order."""

    def __init__(self, *, spec: matrices.BuildSpec, tree: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.tree = tree

    def collect(self) -> Iterator[BuildItem]:
        for target in self.spec.targets:
            item = BuildItem.from_parent(self, name=target)
            if self.spec.skip_reason:
                item.add_marker(pytest.mark.skip(reason=self.spec.skip_reason))
            yield item

    def get_build(self) -> Build:
        """This build's Build object, made on first use on this worker."""
        state = self.config.stash[STATE]
        build = state.builds.get(self.nodeid)
        if build is None:
            s = state.settings
            out = s.results / self.path.stem / self.spec.id
            build_dir = s.build_dir / self.path.stem / self.spec.id if s.build_dir else None
            runtime = self.config.hook.pytest_kbuild_make_runtime(
                config=self.config, name=self.spec.runtime
            )
            build = Build.from_spec(
                self.spec,
                self.tree,
                runtime=runtime,
                jobs=s.jobs or _default_jobs(self.config),
                output_dir=out,
                build_dir=build_dir,
                fail_fast=s.fail_fast,
                cache_dir=s.cache_dir,
                cache_remote=s.cache_remote,
                keep_build_dir=s.keep_build_dir,
                jobserver=state.jobserver.path if state.jobserver else None,
            )
            build.extra_metadata["matrix"] = {
                "path": str(self.path),
                "line": self.spec.line,
                "origin": self.spec.origin,
            }
            build.extra_metadata["pytest_selection"] = self.selection()
            build.extra_metadata["jobserver"] = (
                state.jobserver.to_json()
                if state.jobserver
                else {"mode": s.jobserver, "slots": None, "fifo": None}
            )
            state.builds[self.nodeid] = build
            build.prepare()
            self.config.hook.pytest_kbuild_build_started(config=self.config, build=build)
        return build

    def selection(self, target: str | None = None) -> str:
        """The pytest command line that reruns this build (or one target)."""
        rel = os.path.relpath(self.path, self.config.invocation_params.dir)
        expr = self.spec.id if target is None else f"{self.spec.id} and {target}"
        return shlex.join(["pytest", f"--kbuild-matrix={rel}", "-k", expr])

    def teardown(self) -> None:
        state = self.config.stash[STATE]
        build = state.builds.get(self.nodeid)
        if build is not None:
            build.finish()
            state.finished.append(self.nodeid)


class TargetFailed(Exception):
    """Raised by BuildItem.runtest when its target failed."""

    def __init__(self, result: TargetResult) -> None:
        super().__init__(result.reason)
        self.result = result


class BuildItem(pytest.Item):
    """One target of one build; its duration is the target's own time."""

    parent: BuildNode

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        spec = self.parent.spec
        self.target = Target.load(self.name)
        self.user_properties += [
            ("arch", spec.arch),
            ("toolchain", spec.toolchain),
            ("kconfig", spec.kconfig),
            ("build_id", spec.id),
            ("target", self.name),
        ]

    def setup(self) -> None:
        # Dependencies deselected with -k still run, here, so that the
        # call phase (and the reported duration) is this target's alone.
        try:
            build = self.parent.get_build()
            for dep in with_dependencies(self.target.depends):
                build.run_target(dep)
            # A host tool this target runs (rsync for headers) is missing:
            # this item errors before make runs, as for a missing compiler.
            missing = build.check_target_tools(self.name)
            if missing is not None:
                raise KbuildInfraError(missing.reason)
        except KbuildError as err:
            # Bad input or a machine that cannot build (missing compiler):
            # an error of this item, said plainly, without a traceback (nor
            # the KbuildError again as the context of pytest's exception).
            msg = f"{self.parent.spec.id}::{self.name} ERROR: {err}"
            raise pytest.fail.Exception(msg, pytrace=False) from None

    def runtest(self) -> None:
        build = self.parent.get_build()
        result = build.run_target(self.name)
        log = self.config.stash[STATE].shown(build.output_dir / BUILD_LOG)
        self.user_properties += [
            ("status", result.status.value),
            ("duration", f"{result.duration:.3f}"),
            ("warnings", result.warnings),
            ("log", str(log)),
            ("reproducer", build.reproducer()),
            ("selection", self.parent.selection(self.name)),
        ]
        # This target's compiler cache figures: cache_hits, cache_remote_hits...
        self.user_properties += [(f"cache_{k}", v) for k, v in result.cache.items()]
        blocked = build.failed_dependency(self.name) if result.status is Status.SKIP else None
        if blocked is not None:
            # Not a precondition (no CONFIG_MODULES): this target never ran.
            self.user_properties.append(("blocked_by", blocked))
        self.ihook.pytest_kbuild_build_finished(item=self, result=result)
        if result.status in (Status.FAIL, Status.ERROR):
            raise TargetFailed(result)
        if result.status is Status.SKIP:
            raise pytest.skip.Exception(result.reason, _use_item_location=True)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        build = self.config.stash[STATE].builds.get(self.parent.nodeid)
        if build is None or not isinstance(excinfo.value, (KbuildError, TargetFailed)):
            return str(super().repr_failure(excinfo, style=style))
        if isinstance(excinfo.value, KbuildError):
            # Bad input or infrastructure found while building: the message
            # says what and where; a traceback would only hide it.
            return "\n".join(
                [
                    f"{self.parent.spec.id}::{self.name} ERROR: {excinfo.value}",
                    f"log: {self.config.stash[STATE].shown(build.output_dir / BUILD_LOG)}",
                    f"reproduce: {build.reproducer()}",
                ]
            )
        result = excinfo.value.result
        log = build.output_dir / BUILD_LOG
        shown = self.config.stash[STATE].shown(log)
        lines = [f"{self.parent.spec.id}::{self.name} {result.status.value}: {result.reason}"]
        lines += [f"  {e}" for e in result.errors]
        lines += [
            f"log: {shown}",
            f"reproduce: {build.reproducer()}",
            f"rerun: {self.parent.selection(self.name)}",
        ]
        tail = _log_tail(log, result.log_start, result.log_end)
        if tail:
            lines += ["", f"--- last lines of {self.name} in build.log ---", tail]
        return "\n".join(lines)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.parent.spec.line
        return self.path, (line - 1 if line else None), f"{self.parent.spec.id}::{self.name}"


def _log_tail(path: Path, start: int, end: int, lines: int = 25) -> str:
    try:
        with path.open("rb") as f:
            f.seek(start)
            text = f.read(max(0, end - start)).decode(errors="replace")
    except OSError:
        return ""
    return logscan.tail(text, lines)


def _default_jobs(config: pytest.Config) -> int:
    """CPUs divided among xdist workers (at least one job each)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    return max(1, (os.cpu_count() or 1) // max(1, workers))
