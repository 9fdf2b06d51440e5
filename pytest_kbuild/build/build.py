"""Run one build: a BuildSpec (what) with BuildOptions (how and where) on a
Runtime, target by target -> a BuildResult with its metadata record,
writing build.log, artifacts and metadata.json."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import options as opts
from .. import runtime as runtimes
from .. import spec as specs
from ..definitions.targets import Target, with_dependencies
from ..diagnostics import baseline as baselines
from ..errors import KbuildError, KbuildInfraError, KbuildUserError, TargetTimeout, ToolNotFound
from ..options import BuildOptions
from ..results import (
    BUILD_LOG,
    Status,
    TargetResult,
)
from ..run.runlock import RunLock
from ..runtime.base import Runtime
from ..runtime.container import ContainerOptions
from ..spec import BuildSpec
from . import cachestats, gate, outputs, steps, verdict, workdirs
from . import reproducer as reproducers
from . import shell as shells
from .make import MakeEnv
from .record import BuildRecord, now, runtime_facts
from .result import BuildResult
from .steps import Step
from .toolcheck import check_tools, check_version


class Build:
    """One kernel build: ``Build(tree, target_arch="arm64", toolchain="gcc").run()``.

    Give a BuildSpec and BuildOptions, or (the convenience of the Python API)
    their fields as keywords: ``Build(tree, target_arch=..., jobs=4)``.
    Targets run in dependency order; each gets a TargetResult. Outputs land
    in *output_dir* (build.log, metadata.json, artifacts); objects in
    *build_dir* (a fresh temporary directory unless given). *runtime* is a
    Runtime object (default: the one spec.runtime names); *jobserver* the
    FIFO of a make jobserver shared with other builds. *incremental* keeps
    the objects a given *build_dir* holds (a bisect's steps), where a build
    otherwise starts from an empty one.
    """

    def __init__(
        self,
        tree: str | Path = ".",
        spec: BuildSpec | None = None,
        options: BuildOptions | None = None,
        *,
        output_dir: str | Path | None = None,
        build_dir: str | Path | None = None,
        runtime: Runtime | str | None = None,
        jobserver: str | Path | None = None,
        incremental: bool = False,
        record_extras: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        if isinstance(runtime, str):
            fields["runtime"], runtime = runtime, None
        self.spec = spec or specs.from_keywords(
            fields, runtimes.Registry(), runtime.name if runtime else None
        )
        self.options = self._options(options, fields)
        self.baseline = baselines.load(self.options.baseline) if self.options.baseline else None
        if self.options.fail_on == "new-warnings" and self.baseline is None:
            raise KbuildUserError(
                f"build {self.spec.id}: fail-on new-warnings needs a baseline to tell what is "
                "new (--kbuild-baseline=DIR, kbuild --baseline DIR)"
            )
        self.tree = specs.check_tree(Path(tree).resolve(), "tree")
        self.id = self.spec.id
        self.output_dir = Path(output_dir or Path("kbuild-results") / self.id).resolve()
        fifo = Path(jobserver) if jobserver else None
        self.make = make = MakeEnv.for_build(
            self.tree, self.spec, self.options, fifo, self.output_dir
        )
        self.arch, self.toolchain = make.arch, make.toolchain
        self.wrapper, self.repro = make.wrapper, make.repro
        o = self.options
        if runtime is None:
            container = ContainerOptions(image=o.image, pull=o.pull, network=o.network)
            runtime = runtimes.make(self.spec.runtime, "runtime", container)
        self.runtime: Runtime = runtime
        if o.cache_remote:
            self.wrapper.check_remote(o.cache_remote, "cache remote")
        self._own_build_dir = build_dir is None
        self._incremental = incremental and build_dir is not None
        self.make.build_dir = Path(build_dir).resolve() if build_dir else None
        workdirs.check_build_dir(self.build_dir, self.tree, self.output_dir)
        self._tools = make.tool_commands()
        self._reproducer: str | None = None  # once the runtime is bound (prepare())
        initial = BuildRecord.initial(make, self.runtime.describe(), self.reproducer(), self._tools)
        self.record = initial.with_extras(record_extras or {})
        self.result = BuildResult(self.id, self.output_dir, record=self.record)
        self._lifecycle()

    def _options(self, options: BuildOptions | None, fields: dict[str, Any]) -> BuildOptions:
        """The run's options with *fields* over them. A matrix's per-build
        fail_on:/timeout: and a plan build's kernel_image win over the run's
        (and so are in the reproducer)."""
        per_build = {
            "fail_on": self.spec.fail_on,
            "timeout": self.spec.timeout,
            "kernel_image": self.spec.kernel_image,
        }
        fields.update({k: v for k, v in per_build.items() if v})
        try:
            return opts.replace(options or BuildOptions(), **fields)
        except TypeError as err:
            raise TypeError(f"Build(): {err}") from None

    def _lifecycle(self) -> None:
        """Where the build is in prepare -> targets -> finish."""
        self._prepared = False
        self._writable = False  # the output dir and build.log exist
        self._prepare_error: KbuildError | None = None  # every target reports it
        self._log_started = False  # build.log's first lines are written
        self._since = 0.0  # time.time() when the build started (less 1 s)
        self._dir_lock: RunLock | None = None  # held on a given build dir while building
        self._reserve = workdirs.SpaceReserve(self.output_dir)
        self._timed_out = ""  # the target that timed out: later ones are skipped
        self._interrupted = ""  # why Ctrl-C or SIGTERM stopped the build
        self._attempts: dict[str, int] = {}  # tries of each target so far
        # Why the last metadata.json could not be written (finish() never raises).
        self.unwritten = ""

    @property
    def build_dir(self) -> Path | None:
        """Where the objects are (a temporary one is made by prepare())."""
        return self.make.build_dir

    @property
    def jobs(self) -> int:
        return self.make.jobs

    @property
    def jobserver(self) -> Path | None:
        """The FIFO of a make jobserver shared with other builds."""
        return self.make.jobserver

    # -- what is built ----------------------------------------------------------
    @property
    def targets(self) -> list[str]:
        return list(self.spec.targets)

    # -- public API -------------------------------------------------------------
    def run(self, targets: Iterable[str] | None = None) -> BuildResult:
        """Run *targets* (default: this build's) and their dependencies."""
        try:
            self.prepare()
            for name in with_dependencies(targets if targets is not None else self.targets):
                self.run_target(name)
        finally:
            self.finish()
        return self.result

    def reproducer(self, tree: Path | None = None) -> str:
        """The one-line ``kbuild`` command that repeats this build (in
        *tree*, default its own: a bisect names the user's, not its worktree).
        Computed once the runtime is bound (a container's line pins the
        image digest); before, with what the runtime was asked for."""
        if tree is None and self._reproducer is not None:
            return self._reproducer
        rt = self.make.runtime or self.runtime
        # The timestamp taken from the tree goes along: a copy of the tree
        # may have another mtime.
        pinned = self.repro.reproducer_env()
        spec = dataclasses.replace(
            self.spec, env=tuple(sorted({**dict(self.spec.env), **pinned}.items()))
        )
        return reproducers.line(tree or self.tree, spec, self.options, rt.reproducer_args())

    def timeout_of(self, target: str) -> float | None:
        """Seconds *target* may run: its own timeout (a matrix's ``timeout:
        {modules: 3600}``), else the build's or the run's, at most the
        target's own limit (data/target: a boot's 300 s)."""
        own = dict(self.spec.target_timeouts).get(target)
        if own:
            return float(own)
        limit = Target.load(target).timeout
        if limit is None:
            return self.options.timeout
        return min(self.options.timeout or limit, limit)

    def makevars(self) -> dict[str, str]:
        """Every variable passed to make (MakeEnv.makevars)."""
        return self.make.makevars()

    def make_command(self, args: Iterable[str]) -> list[str]:
        """make with this build's jobs, O= and variables, then *args*."""
        return self.make.make_command(args)

    # -- lifecycle --------------------------------------------------------------
    def prepare(self) -> None:
        """Create directories, check the toolchain, write the first metadata.json.

        Raises ToolNotFound (infrastructure) when the compiler is missing.
        """
        if self._prepare_error is not None:
            raise self._prepare_error
        if self._prepared:
            return
        self._prepared = True
        try:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            stale = workdirs.clear_earlier_results(self.output_dir)
            # Unbuffered: a write that fails (a full disk) fails where it is
            # made, as a KbuildInfraError (MakeEnv.line), never at a later flush.
            self.make.log = (self.output_dir / BUILD_LOG).open("wb", buffering=0)
            self._writable = True
        except OSError as err:
            # Nowhere to keep a log or metadata.json: the error alone says why.
            self._prepare_error = workdirs.dir_error("output dir", self.output_dir, err)
            raise self._prepare_error from None
        self.record.started = now()
        self._since = time.time() - 1  # files made from now on are this build's
        self._write_metadata()
        self._reserve.take()
        if self.spec.skip_reason:
            self._start_log(stale)
            return  # nothing is built, nothing is checked
        try:
            if self.build_dir is not None:
                # A given build dir is this build's alone while it runs (runlock.py).
                self._dir_lock = workdirs.lock_build_dir(self.build_dir, self.id)
            self._bind()
            self._write_metadata()
            self._start_log(stale)
            check_tools(self.bound, self.arch, self.toolchain, self.wrapper, self.makevars())
            check_version(self.toolchain, self.arch, self.tree, self.record.toolchain)
        except KbuildError as err:
            # Every later target of this build reports the same error.
            self._prepare_error = err
            self.record.error = str(err)
            self._start_log(stale)
            self.make.line(f"E: {err}")
            self._write_metadata()
            raise

    def _bind(self) -> None:
        """The build dir made, the runtime bound to it, the record told both."""
        make = self.make
        make.build_dir = workdirs.make_build_dir(make.build_dir, self.id, self._incremental)
        self.record.build_dir = str(make.build_dir)
        self.record.makevars = self.makevars()
        self.record.reproducible = self.repro.record(self.tree, make.build_dir)
        make.runtime = self.runtime.bind(make.workspace())
        facts = runtime_facts(make.runtime, self.tree, self.record.toolchain, self._tools)
        self.record.toolchain, self.record.runtime = facts["toolchain"], facts["runtime"]
        self.record.tree, self.record.tools = facts["tree"], facts["tools"]
        self._reproducer = self.reproducer()
        self.record.reproducer = self._reproducer

    def _start_log(self, stale: list[str]) -> None:
        """build.log's first lines, once (reproducer.start_log)."""
        if not self._log_started:
            self._log_started = True
            compiler = str(self.record.toolchain.get("version") or "unknown")
            reproducers.start_log(self.make, self.reproducer(), compiler, stale)

    def shell(self) -> int:
        """An interactive shell in this build's environment (kbuild --shell;
        after prepare()): its runtime, the tree, env, make variables and
        build dir. Returns the shell's exit status."""
        assert self.build_dir is not None
        jobs = None if self.jobserver else self.jobs
        env = shells.environment(self.make.env(), self.makevars(), self.build_dir, jobs)
        return shells.run(self.bound, self.tree, env)

    def finish(self) -> None:
        """Write the final metadata.json; remove a temporary build directory."""
        if not self._writable:  # not prepared, or no output dir to write into
            return
        if self._interrupted or self.result.status == Status.INTERRUPTED:
            self._skip_rest(f"not run: the build was {self._interrupted or 'interrupted'}")
        passed = {n for n, t in self.result.targets.items() if t.status == Status.PASS}
        live = self.make.log is not None and not self._interrupted
        outputs.note(self.record, self.make, self._since, passed, live)
        self.record.finished = now()
        status = Status.ERROR if self._prepare_error else self.result.status
        if self._interrupted and status != Status.ERROR:
            status = Status.INTERRUPTED
        self.record.status = status.value
        outputs.note_cache(self.record, self.make)
        try:
            self._write_metadata()
        except KbuildInfraError as err:
            # finish() runs in teardown and after Ctrl-C: say it, never raise.
            self.unwritten = str(err)
            with contextlib.suppress(KbuildInfraError):
                self.make.line(f"E: {err}")
        self._reserve.give_back()
        if self.make.log is not None:
            with contextlib.suppress(OSError):
                self.make.log.close()
            self.make.log = None
        if self.build_dir is not None and self._own_build_dir:
            if self.options.keep_build_dir:
                workdirs.keep_temporary(self.build_dir)
            else:
                workdirs.remove_temporary(self.build_dir)
        if self._dir_lock is not None:
            self._dir_lock.release()
            self._dir_lock = None

    def interrupted(self, why: str) -> None:
        """Say that Ctrl-C or SIGTERM (*why*: "terminated by SIGTERM") stopped
        this build, also between targets: finish() records it INTERRUPTED and
        the targets that did not run SKIP."""
        self._interrupted = why

    def _skip_rest(self, reason: str) -> None:
        """Record SKIP for this build's targets that did not run."""
        for name in with_dependencies(self.targets):
            if name not in self.result.targets:
                self._record(TargetResult(name, Status.SKIP, reason=reason))

    def failed_dependency(self, name: str) -> str | None:
        """The first dependency of *name* that ran and did not pass."""
        return gate.failed_dependency(name, self.result.targets)

    def run_target(self, name: str) -> TargetResult:
        """Run *name* once (dependencies first); later calls return its result."""
        if name in self.result.targets:
            return self.result.targets[name]
        target = Target.load(name)
        for dep in target.depends:
            self.run_target(dep)
        self.prepare()
        reason = self._skip_reason(target)
        if reason:
            return self._record(TargetResult(name, Status.SKIP, reason=reason))
        error = self.check_target_tools(name)
        if error is not None:
            return error
        try:
            return self._record(self._tries(target))
        except KbuildInfraError as err:
            if name not in self.result.targets:
                # Broken before it was recorded (build.log could not be
                # written): an ERROR, so the build never reads PASS.
                self.result.targets[name] = TargetResult(name, Status.ERROR, reason=str(err))
                self.record.record_target(self.result.targets[name])
            raise

    def _tries(self, target: Target) -> TargetResult:
        """*target* run until it passes, fails, or ends in an ERROR that is not
        retryable, at most 1 + --kbuild-retries times; the earlier tries are
        kept in the result's ``attempts`` (and their output in build.log)."""
        attempts: list[dict[str, Any]] = []
        tries = 1 + self.options.retries
        for n in range(1, tries + 1):
            try:
                result = self._execute(target)
            except TargetTimeout:
                result = self.result.targets[target.name]  # recorded by _execute
                if n == tries:
                    result.attempts = attempts
                    self._record(result)
                    raise
                self._timed_out = ""
            else:
                # Retryable: an ERROR of the machine, or a boot that hung (TCG).
                if n == tries or not result.retryable:
                    result.attempts = attempts
                    return result
            attempts.append(result.attempt())
            self.make.line(f"I: {target.name}: {result.reason}")
            steps.before_retry(self.make, target.name, result.infra)
            self.make.line(f"I: {target.name}: trying again (try {n + 1} of {tries})")
        raise AssertionError("unreachable: the last try returns or raises")

    def _skip_reason(self, target: Target) -> str | None:
        return gate.skip_reason(target, self.make, self.result.targets, self._timed_out)

    def check_target_tools(self, name: str) -> TargetResult | None:
        """Before *name* runs (after its dependencies): its ERROR result, recorded,
        when a host tool it needs is missing, else None (also when it will skip)."""
        done = self.result.targets.get(name)
        if done is not None:
            return done if done.status == Status.ERROR else None
        target = Target.load(name)
        if self._skip_reason(target):
            return None
        try:
            gate.check_tools(target, self.make)
        except ToolNotFound as err:
            self.make.line(f"E: {err}")
            return self._record(TargetResult(name, Status.ERROR, reason=str(err)))
        return None

    @property
    def bound(self) -> Runtime:
        """The runtime bound to this build (after prepare())."""
        return self.make.bound

    def waited(self) -> tuple[float, float | None]:
        """The running target's seconds waiting for jobserver slots so far,
        and since when (time.time()) it waits now, or None."""
        return self.make.queued, self.make.waiting_since

    # -- internals --------------------------------------------------------------
    def _execute(self, target: Target) -> TargetResult:
        """One try of *target*: its kind's runner (steps.py), then, for what
        ran commands, the verdict (verdict.py)."""
        make = self.make
        self.make.line(f"# target {target.name}")
        start = make.offset()
        cache_log = cachestats.log_path(self.wrapper, make.env())
        cache_offset = cachestats.log_size(cache_log)
        started, since = time.monotonic(), time.time() - 1  # 1 s: coarse file mtimes
        self._attempts[target.name] = self._attempts.get(target.name, 0) + 1
        limit = self.timeout_of(target.name) or 0.0
        step = Step(target, make, self.output_dir, self.record, limit, self._attempts[target.name])
        try:
            with make.target(target, limit):
                done = steps.RUNNERS[target.kind](step)
        except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM (signals.Terminated)
            why = str(err) or "interrupted (Ctrl-C)"
            self._interrupted = self._interrupted or why
            self._stopped(target, Status.INTERRUPTED, why, started, start)
            self.finish()
            raise
        except KbuildError as err:
            timeout = isinstance(err, TargetTimeout)
            if timeout:
                self._timed_out = target.name
            self.make.line(f"E: {err}")
            self._stopped(target, Status.ERROR, str(err), started, start, "timeout" * timeout)
            raise
        except BaseException as err:
            # Stopped from outside while make ran (pytest-timeout's signal
            # method raises its Failed here): the runtime has killed make;
            # say so rather than leave the target unrecorded and the build
            # PASS. The build stops there, as after its own timeout.
            self._timed_out = target.name
            why = f"stopped from outside the build: {type(err).__name__}: {err}".strip(": ")
            self.make.line(f"E: {why}")
            self._stopped(target, Status.ERROR, why, started, start, "stopped")
            raise
        # Its own time: the seconds it waited for jobserver slots are apart.
        queued = make.queued
        duration = time.monotonic() - started - queued
        if isinstance(done, TargetResult):  # a boot or KUnit run judged itself
            if done.status != Status.SKIP:
                done.duration, done.log_start, done.log_end = duration, start, make.offset()
                done.queued = queued
            return done
        cache = cachestats.counts(
            self.wrapper, cache_log, cache_offset, cachestats.log_size(cache_log)
        )
        done_keys = (d["key"] for t in self.result.targets.values() for d in t.diagnostics)
        earlier = set(done_keys) if self.baseline is not None else set()
        span = verdict.Span(start, make.offset(), duration, since, queued)
        return verdict.judge(step, done, span, cache=cache, baseline=self.baseline, earlier=earlier)

    def _stopped(
        self,
        target: Target,
        status: Status,
        why: str,
        started: float,
        start: int,
        infra: str = "",
    ) -> None:
        """Record *target* stopped while it ran: Ctrl-C (INTERRUPTED), its
        timeout (ERROR, retryable), or another error or stop (ERROR)."""
        queued = self.make.queued
        took = time.monotonic() - started - queued
        result = TargetResult(target.name, status, took, reason=why, queued=queued)
        if status == Status.ERROR:
            result.infra, result.retryable = infra, infra == "timeout"
            result.log_start, result.log_end = start, self.make.offset()
        self._record(result)

    def _record(self, result: TargetResult) -> TargetResult:
        self.result.targets[result.name] = result
        if self._prepared:
            self.record.record_target(result)
            self.record.status = "running"
            self._write_metadata()
        return result

    def _write_metadata(self) -> None:
        try:
            self.record.write(self.output_dir)
        except KbuildInfraError:
            if not self._reserve.give_back():
                raise
            self.record.write(self.output_dir)  # into the room kept for it
