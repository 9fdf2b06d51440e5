"""Run one build: a BuildSpec (what) with BuildOptions (how and where) on a
Runtime, target by target -> a BuildResult with its metadata record,
writing build.log, artifacts and metadata.json."""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path
from typing import Any, BinaryIO

from . import artifacts, cachestats, diagnostics, failon, infra, logscan, workdirs
from . import baseline as baselines
from . import jobserver as jobservers
from . import kconfig as kcfg
from . import options as opts
from . import reproducer as reproducers
from . import runtime as runtimes
from . import spec as specs
from .arch import Arch
from .errors import KbuildError, KbuildInfraError, KbuildUserError, TargetTimeout, ToolNotFound
from .metadata import BuildRecord, now, runtime_facts
from .options import BuildOptions
from .results import BUILD_LOG, COMMAND_ECHO, BuildResult, Status, TargetResult
from .runtime.base import Runtime, Workspace
from .runtime.container import ContainerOptions
from .spec import BuildSpec
from .targets import Target, with_dependencies
from .toolchain import Toolchain, Wrapper
from .toolcheck import check_target_tools, check_tools


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
        **fields: Any,
    ) -> None:
        if isinstance(runtime, str):
            fields["runtime"], runtime = runtime, None
        self.spec = spec or specs.from_keywords(fields, runtime.name if runtime else None)
        # A matrix's per-build fail_on:/timeout: win over the run's options.
        per_build = {"fail_on": self.spec.fail_on, "timeout": self.spec.timeout}
        fields.update({k: v for k, v in per_build.items() if v})
        try:
            self.options = opts.replace(options or BuildOptions(), **fields)
        except TypeError as err:
            raise TypeError(f"Build(): {err}") from None
        self.baseline = baselines.load(self.options.baseline) if self.options.baseline else None
        if self.options.fail_on == "new-warnings" and self.baseline is None:
            raise KbuildUserError(
                f"build {self.spec.id}: fail-on new-warnings needs a baseline to tell what is "
                "new (--kbuild-baseline=DIR, kbuild --baseline DIR)"
            )
        self.tree = specs.check_tree(Path(tree).resolve(), "tree")
        self.arch = Arch.load(self.spec.arch)
        self.toolchain = Toolchain.load(self.spec.toolchain)
        self.wrapper = Wrapper.load(self.spec.wrapper)
        o = self.options
        if runtime is None:
            container = ContainerOptions(image=o.image, pull=o.pull, network=o.network)
            runtime = runtimes.make(self.spec.runtime, "runtime", container)
        self.runtime: Runtime = runtime
        if o.cache_remote:
            self.wrapper.check_remote(o.cache_remote, "cache remote")
        self.jobs = o.jobs or os.cpu_count() or 1
        # make gets its jobs from a shared jobserver's FIFO, not --jobs; a
        # container runtime bind-mounts it (Workspace.jobserver).
        self.jobserver = Path(jobserver) if jobserver else None
        self.id = self.spec.id
        self.output_dir = Path(output_dir or Path("kbuild-results") / self.id).resolve()
        self._own_build_dir = build_dir is None
        self._incremental = incremental and build_dir is not None
        self.build_dir = Path(build_dir).resolve() if build_dir else None
        workdirs.check_build_dir(self.build_dir, self.tree, self.output_dir)
        self._rt: Runtime | None = None  # the runtime bound to this build (prepare())
        self.record = self._initial_record()
        self.result = BuildResult(self.id, self.output_dir, record=self.record)
        self._log: BinaryIO | None = None
        self._prepared = False
        self._writable = False  # the output dir and build.log exist
        self._deadline: float | None = None  # when the running target times out
        self._limit = 0.0  # its timeout in seconds
        self._timed_out = ""  # the target that timed out: later ones are skipped
        self._prepare_error: KbuildInfraError | None = None

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
        *tree*, default its own: a bisect names the user's, not its worktree)."""
        rt = self._rt or self.runtime
        return reproducers.line(tree or self.tree, self.spec, self.options, rt.reproducer_args())

    def timeout_of(self, target: str) -> float | None:
        """Seconds *target* may run: its own timeout (a matrix's ``timeout:
        {modules: 3600}``), else the build's or the run's."""
        own = dict(self.spec.target_timeouts).get(target)
        return float(own) if own else self.options.timeout

    def makevars(self) -> dict[str, str]:
        """Every variable passed to make: the toolchain's, then the user's."""
        out = self.toolchain.makevars(self.arch, self.wrapper)
        out.update(self.spec.make_variables)
        return out

    def make_command(self, args: Iterable[str]) -> list[str]:
        assert self.build_dir is not None
        argv = ["make", "--silent"]
        if not self.options.fail_fast:
            argv.append("--keep-going")
        if self.jobserver is None:
            argv.append(f"--jobs={self.jobs}")
        argv.append(f"O={self.build_dir}")
        argv += [f"{k}={v}" for k, v in self.makevars().items()]
        return argv + list(args)

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
            self._log = (self.output_dir / BUILD_LOG).open("wb")
            self._writable = True
        except OSError as err:
            # Nowhere to keep a log or metadata.json: the error alone says why.
            self._prepare_error = workdirs.dir_error("output dir", self.output_dir, err)
            raise self._prepare_error from None
        self.record.started = now()
        self._write_metadata()
        if self.spec.skip_reason:
            return  # nothing is built, nothing is checked
        try:
            self.build_dir = workdirs.make_build_dir(self.build_dir, self.id, self._incremental)
            self.record.build_dir = str(self.build_dir)
            self._rt = self.runtime.bind(self.workspace())
            facts = runtime_facts(self._rt, self.tree, self.record.toolchain)
            self.record.toolchain, self.record.runtime = facts["toolchain"], facts["runtime"]
            self.record.tree, self.record.reproducer = facts["tree"], self.reproducer()
            self._write_metadata()
            check_tools(self._rt, self.arch, self.toolchain, self.wrapper)
        except KbuildInfraError as err:
            # Every later target of this build reports the same error.
            self._prepare_error = err
            self.record.error = str(err)
            self._log_line(f"E: {err}")
            self._write_metadata()
            raise

    def workspace(self) -> Workspace:
        """The directories and toolchain this build asks of its runtime."""
        assert self.build_dir is not None
        cache = self.options.cache_dir
        return Workspace(
            arch=self.arch.name,
            toolchain=self.toolchain.name,
            tree=self.tree,
            build_dir=self.build_dir,
            cache_dir=Path(cache) if self.wrapper.command and cache else None,
            jobserver=self.jobserver,
        )

    def finish(self) -> None:
        """Write the final metadata.json; remove a temporary build directory."""
        if not self._writable:  # not prepared, or no output dir to write into
            return
        self.record.finished = now()
        status = Status.ERROR if self._prepare_error else self.result.status
        self.record.status = status.value
        # Once the log is closed (a second finish(), after Ctrl-C) the
        # runtime is not asked for the wrapper's report again.
        if self._log is not None and self._rt is not None:
            stats = cachestats.report(self.wrapper, self._rt, self.tree, self._env())
            if stats:
                self.record.wrapper["stats"] = stats
        if self.build_dir is not None:
            cache_log = cachestats.log_path(self.wrapper, self._env())
            counts = cachestats.counts(self.wrapper, cache_log, 0, None)
            if counts:
                self.record.wrapper["counts"] = counts
        self._write_metadata()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.build_dir and self._own_build_dir and not self.options.keep_build_dir:
            shutil.rmtree(self.build_dir, ignore_errors=True)

    def failed_dependency(self, name: str) -> str | None:
        """The first dependency of *name* that ran and did not pass."""
        for dep in with_dependencies(Target.load(name).depends):
            r = self.result.targets.get(dep)
            if r is not None and not r.built:
                return dep
        return None

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
        return error if error is not None else self._record(self._tries(target))

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
                if n == tries or result.status is not Status.ERROR or not result.retryable:
                    result.attempts = attempts
                    return result
            attempts.append(result.attempt())
            self._log_line(f"I: {target.name}: {result.reason}")
            self._before_retry(target.name, result.infra)
            self._log_line(f"I: {target.name}: trying again (try {n + 1} of {tries})")
        raise AssertionError("unreachable: the last try returns or raises")

    def _before_retry(self, name: str, broke: str) -> None:
        """What infra.yaml says to do before *name* runs again after *broke*:
        ``make clean`` after a full disk (objects go, .config stays)."""
        sig = infra.signature(broke)
        if sig is None or not sig.before_retry:
            return
        assert self.build_dir is not None
        before = workdirs.used_bytes(self.build_dir)
        rc = self._run(["make", sig.before_retry])
        freed = before - workdirs.used_bytes(self.build_dir)
        done = "done" if rc == 0 else f"exit status {rc}"
        self._log_line(
            f"I: {name}: make {sig.before_retry} in the build dir before the next try ({done}): "
            f"freed {workdirs.size(max(freed, 0))}; "
            f"{workdirs.free_space({'build dir': self.build_dir})}"
        )

    def _skip_reason(self, target: Target) -> str | None:
        """Why *target* does not run now, or None."""
        failed = self.failed_dependency(target.name)
        if self.spec.skip_reason:
            return self.spec.skip_reason
        if failed is not None:
            return f"dependency {failed} did not pass"
        if self._timed_out:
            return f"target {self._timed_out} timed out: the build stopped there"
        if self.options.fail_fast and any(
            r.status is Status.FAIL and not r.built for r in self.result.targets.values()
        ):
            return "fail-fast: an earlier target failed"
        return target.arch_reason(self.arch) or self._config_reason(target)

    def check_target_tools(self, name: str) -> TargetResult | None:
        """Before *name* runs (after its dependencies): its ERROR result, recorded,
        when a host tool it needs is missing, else None (also when it will skip)."""
        done = self.result.targets.get(name)
        if done is not None:
            return done if done.status is Status.ERROR else None
        target = Target.load(name)
        if self._skip_reason(target):
            return None
        try:
            check_target_tools(self.bound, target, self.build_dir)
        except ToolNotFound as err:
            self._log_line(f"E: {err}")
            return self._record(TargetResult(name, Status.ERROR, reason=str(err)))
        return None

    @property
    def bound(self) -> Runtime:
        """The runtime bound to this build (after prepare())."""
        if self._rt is None:
            raise KbuildInfraError(f"build {self.id}: runtime used before prepare()")
        return self._rt

    # -- internals --------------------------------------------------------------
    def _execute(self, target: Target) -> TargetResult:
        assert self._log is not None and self.build_dir is not None
        log = self._log
        log.write(f"# target {target.name}\n".encode())
        log.flush()
        start_offset = log.tell()
        cache_log = cachestats.log_path(self.wrapper, self._env())
        cache_offset = cachestats.log_size(cache_log)
        started = time.monotonic()
        self._limit = self.timeout_of(target.name) or 0.0
        self._deadline = started + self._limit if self._limit else None
        status, reason, rc = Status.PASS, "", 0
        try:
            if target.kind == "config":
                status, reason = self._configure()
            else:
                for cmd in target.expanded_commands(self.arch, str(self.build_dir)):
                    rc = self._run(cmd)
                    if rc != 0:
                        status, reason = Status.FAIL, f"{shlex.join(cmd[:2])} failed"
                        break
        except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM (signals.Terminated)
            took = time.monotonic() - started
            interrupted = TargetResult(
                target.name, Status.INTERRUPTED, took, reason=str(err) or "interrupted (Ctrl-C)"
            )
            self._record(interrupted)
            self.finish()
            raise
        except KbuildError as err:
            if isinstance(err, TargetTimeout):
                self._timed_out = target.name
            self._log_line(f"E: {err}")
            took = time.monotonic() - started
            timeout = isinstance(err, TargetTimeout)
            error = TargetResult(target.name, Status.ERROR, took, reason=str(err))
            error.infra, error.retryable = ("timeout", True) if timeout else ("", False)
            error.log_start, error.log_end = start_offset, log.tell()
            self._record(error)
            raise
        except BaseException as err:
            # Stopped from outside while make ran (pytest-timeout's signal
            # method raises its Failed here): the runtime has killed make;
            # say so rather than leave the target unrecorded and the build
            # PASS. The build stops there, as after its own timeout.
            self._timed_out = target.name
            why = f"stopped from outside the build: {type(err).__name__}: {err}".strip(": ")
            self._log_line(f"E: {why}")
            took = time.monotonic() - started
            stopped = TargetResult(target.name, Status.ERROR, took, reason=why)
            stopped.infra, stopped.log_start, stopped.log_end = "stopped", start_offset, log.tell()
            self._record(stopped)
            raise
        duration = time.monotonic() - started
        log.flush()
        end_offset = log.tell()
        text = logscan.read_slice(self.output_dir / BUILD_LOG, start_offset, end_offset)
        diags = diagnostics.parse(text, tree=str(self.tree), build_dir=str(self.build_dir))
        counts = diagnostics.summary(diags)
        # The compiler OOM-killed, a full disk, the engine: the machine broke it.
        broke = infra.classify(text, rc) if status is Status.FAIL else None
        if broke is not None:
            status, reason = Status.ERROR, broke.reason
            if broke.free_space:
                dirs = {"build dir": self.build_dir, "results dir": self.output_dir}
                reason = f"{reason} ({workdirs.free_space(dirs)})"
        result = TargetResult(
            target.name,
            status,
            duration,
            reason,
            warnings=counts["warnings"],
            error_count=counts["errors"],
            diagnostics=[d.to_json() for d in diags],
            log_start=start_offset,
            log_end=end_offset,
            cache=cachestats.counts(
                self.wrapper, cache_log, cache_offset, cachestats.log_size(cache_log)
            ),
        )
        if broke is not None:
            result.infra, result.retryable = broke.name, broke.retryable
        if self.baseline is not None:
            earlier = {d["key"] for t in self.result.targets.values() for d in t.diagnostics}
            compare = self.baseline.compare
            result.baseline = compare(self.id, target.name, result.diagnostics, earlier)
        if status is Status.ERROR:
            pass  # the reason names what broke and the log line that says so
        elif status is Status.FAIL:
            new = {d["key"]: d.get("new") for d in result.diagnostics}
            firsts = diagnostics.first_errors(diags)
            result.errors = [baselines.marked(d.headline, new.get(d.key)) for d in firsts]
            result.errors = result.errors or [reason]
        else:
            assert self.build_dir is not None
            artifacts.collect(target, self.arch, self.build_dir, self.output_dir, result)
            failon.judge(result, self.options.fail_on)
        return result

    def _configure(self) -> tuple[Status, str]:
        assert self.build_dir is not None
        s = self.spec
        # The arch's fragments come first, so the build's own can still override them.
        fragments = (*self.arch.kconfig_add, *s.kconfig_add)
        plan = kcfg.plan(s.kconfig, fragments, self.tree, s.base_dir, self.build_dir)
        self.record.kconfig_sources = plan.sources
        ok, reason = kcfg.run_plan(plan, self.build_dir, self._run, self._log_line)
        return (Status.PASS if ok else Status.FAIL), reason

    def _config_reason(self, target: Target) -> str | None:
        if self.build_dir is None or not (target.requires_config or target.conflicts_config):
            return None
        config = self.build_dir / ".config"
        return target.config_reason(config.read_text(errors="replace") if config.is_file() else "")

    def _run(self, cmd: list[str]) -> int:
        assert self._log is not None
        assert self.build_dir is not None
        # Kbuild runs in the tree (writing only under O=); every other tool
        # runs in the build directory, so nothing ever writes in the tree.
        is_make = cmd[0] == "make"
        argv = self.make_command(cmd[1:]) if is_make else cmd
        if is_make and self.jobserver is not None:
            argv = jobservers.wrap(argv, self.jobserver)
        cwd = self.tree if is_make else self.build_dir
        self._log_line(f"{COMMAND_ECHO}{shlex.join(argv)}")
        self._log.flush()
        # With a jobserver every command holds a slot: make's first job runs
        # without a token, so the slot is taken here for it.
        slot = jobservers.slot(self.jobserver) if self.jobserver else nullcontext()
        deadline = self._deadline
        timeout = max(0.1, deadline - time.monotonic()) if deadline else None
        try:
            with slot:
                rc = self.bound.run(
                    argv, cwd=cwd, env=self._env(), output=self._log, timeout=timeout
                )
        except subprocess.TimeoutExpired:
            raise TargetTimeout(self._limit, argv[0]) from None
        except OSError as err:
            if err.errno == errno.ENOSPC:
                raise KbuildInfraError(f"no space left on device while running {argv[0]}") from None
            raise
        self._log.seek(0, os.SEEK_END)
        if rc != 0:
            self._log_line(f"E: exit status {rc}")
        return rc

    def _log_line(self, line: str) -> None:
        assert self._log is not None
        self._log.write(line.encode() + b"\n")

    def _record(self, result: TargetResult) -> TargetResult:
        self.result.targets[result.name] = result
        if self._prepared:
            self.record.record_target(result)
            self.record.status = "running"
            self._write_metadata()
        return result

    def _write_metadata(self) -> None:
        self.record.write(self.output_dir)

    def _env(self) -> dict[str, str]:
        # The wrapper's tuning yields to the build's env; its cache dir,
        # remote and stats log do not.
        build_dir, o = str(self.build_dir), self.options
        cache_dir = str(o.cache_dir) if o.cache_dir else None
        return {
            **self.wrapper.default_environment(build_dir),
            **dict(self.spec.env),
            **self.wrapper.environment(build_dir, cache_dir, o.cache_remote),
        }

    def _initial_record(self) -> BuildRecord:
        return BuildRecord.initial(
            self.spec,
            self.options,
            toolchain=self.toolchain.describe(self.arch),
            makevars=self.makevars(),
            runtime=self.runtime.describe(),
            jobs=None if self.jobserver else self.jobs,
            jobserver=self.jobserver,
            reproducer=self.reproducer(),
            build_dir=self.build_dir,
            tree=self.tree,
        )
