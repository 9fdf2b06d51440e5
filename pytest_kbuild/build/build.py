"""Run one build: a BuildSpec (what) with BuildOptions (how and where) on a
Runtime, target by target -> a BuildResult with its metadata record,
writing build.log, artifacts and metadata.json."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import shlex
import subprocess
import time
from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path
from typing import Any, BinaryIO

from .. import diagnostics
from .. import kconfig as kcfg
from .. import options as opts
from .. import runtime as runtimes
from .. import spec as specs
from ..boot import initramfs
from ..boot import kunit as kunits
from ..boot import qemu as boots
from ..definitions import compression as compressions
from ..definitions.arch import Arch
from ..definitions.targets import Target, with_dependencies
from ..definitions.toolchain import Toolchain, Wrapper
from ..diagnostics import baseline as baselines
from ..diagnostics import failon, infra, logscan
from ..errors import KbuildError, KbuildInfraError, KbuildUserError, TargetTimeout, ToolNotFound
from ..options import BuildOptions
from ..results import (
    BUILD_LOG,
    COMMAND_ECHO,
    REPRODUCER,
    Artifact,
    Status,
    TargetResult,
)
from ..run import jobserver as jobservers
from ..run.runlock import RunLock
from ..runtime.base import Runtime, Workspace
from ..runtime.container import GUEST_BUILD, GUEST_TREE, ContainerOptions, ContainerRuntime
from ..spec import BuildSpec
from . import artifacts, cachestats, probes, reproducible, workdirs
from . import reproducer as reproducers
from . import shell as shells
from .record import BuildRecord, now, runtime_facts
from .result import BuildResult
from .toolcheck import check_target_tools, check_tools

# Targets whose make links vmlinux (and System.map): when one passed, they are current.
_LINKS_VMLINUX = frozenset({"kernel", "debugkernel", "xipkernel"})


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
        self.spec = spec or specs.from_keywords(
            fields, runtimes.Registry(), runtime.name if runtime else None
        )
        # A matrix's per-build fail_on:/timeout: and a plan build's
        # kernel_image win over the run's options (and so are in the reproducer).
        per_build = {
            "fail_on": self.spec.fail_on,
            "timeout": self.spec.timeout,
            "kernel_image": self.spec.kernel_image,
        }
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
        # The kernel image to build: a plan's kernel_image for this build,
        # else the run's --kbuild-kernel-image / kbuild -I, else the arch's.
        self.arch = Arch.load(self.spec.arch).with_kernel_image(
            self.spec.kernel_image or self.options.kernel_image or ""
        )
        self.toolchain = Toolchain.load(self.spec.toolchain)
        # A user's CROSS_COMPILE= make variable is the prefix of CC too.
        self._cross = dict(self.spec.make_variables).get("CROSS_COMPILE")
        self.wrapper = Wrapper.load(self.spec.wrapper)
        self.repro = reproducible.plan(
            self.tree,
            enabled=self.options.reproducible,
            make_variables=dict(self.spec.make_variables),
            env=dict(self.spec.env),
            environment=os.environ,
            map_build_dir=self.wrapper.prefix_map_build_dir,
            arch=self.arch.name,
        )
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
        # Versions recorded: make, the compiler, the linker, the host tools.
        host_tools = set(self.arch.host_tools)
        for name in with_dependencies(self.spec.targets):
            host_tools.update(Target.load(name).host_tools)
        self._tools = probes.tool_commands(
            self.toolchain.compiler(self.arch, cross_compile=self._cross),
            self.makevars(),
            host_tools,
        )
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
        self._prepare_error: KbuildError | None = None
        self._dir_lock: RunLock | None = None  # held on a given build dir while building
        self._interrupted = ""  # why Ctrl-C or SIGTERM stopped the build
        self._log_started = False  # build.log's first lines are written
        self._since = 0.0  # time.time() when the build started (less 1 s)
        self._target: Target | None = None  # the target running (its make variables)
        self._reserve = workdirs.SpaceReserve(self.output_dir)
        # Why the last metadata.json could not be written (finish() never raises).
        self.unwritten = ""
        self._boot_tries = 0  # boot's tries so far: each keeps its console

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
        # The timestamp taken from the tree goes along: a copy of the tree
        # may have another mtime.
        pinned = self.repro.reproducer_env()
        spec = dataclasses.replace(
            self.spec, env=tuple(sorted({**dict(self.spec.env), **pinned}.items()))
        )
        return reproducers.line(tree or self.tree, spec, self.options, rt.reproducer_args())

    def timeout_of(self, target: str) -> float | None:
        """Seconds *target* may run: its own timeout (a matrix's ``timeout:
        {modules: 3600}``), else the build's or the run's."""
        own = dict(self.spec.target_timeouts).get(target)
        return float(own) if own else self.options.timeout

    def makevars(self) -> dict[str, str]:
        """Every variable passed to make: the toolchain's (for a user's
        CROSS_COMPILE, when given), then the user's (with reproducible mode's
        flags appended to a KCFLAGS/KAFLAGS there)."""
        out = self.toolchain.makevars(self.arch, self.wrapper, cross_compile=self._cross)
        out.update(self.spec.make_variables)
        out.update(self.repro.makevars(self.tree, self.build_dir))
        return out

    def make_command(self, args: Iterable[str]) -> list[str]:
        assert self.build_dir is not None
        argv = ["make"] if self.options.verbose else ["make", "--silent"]
        if not self.options.fail_fast:
            argv.append("--keep-going")
        if self.jobserver is None:
            argv.append(f"--jobs={self.jobs}")
        argv.append(f"O={self.build_dir}")
        makevars = self.makevars()
        if self._target is not None:
            makevars = self._target.adjust_makevars(makevars, dict(self.spec.make_variables))
        argv += [f"{k}={v}" for k, v in makevars.items()]
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
            stale = workdirs.clear_earlier_results(self.output_dir)
            # Unbuffered: a write that fails (a full disk) fails where it is
            # made, as a KbuildInfraError (_log_line), never at a later flush.
            self._log = (self.output_dir / BUILD_LOG).open("wb", buffering=0)
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
            self.build_dir = workdirs.make_build_dir(self.build_dir, self.id, self._incremental)
            self.record.build_dir = str(self.build_dir)
            self.record.makevars = self.makevars()
            self.record.reproducible = self.repro.record(self.tree, self.build_dir)
            self._rt = self.runtime.bind(self.workspace())
            facts = runtime_facts(self._rt, self.tree, self.record.toolchain, self._tools)
            self.record.toolchain, self.record.runtime = facts["toolchain"], facts["runtime"]
            self.record.tree, self.record.reproducer = facts["tree"], self.reproducer()
            self.record.tools = facts["tools"]
            self._write_metadata()
            self._start_log(stale)
            check_tools(self._rt, self.arch, self.toolchain, self.wrapper, self.makevars())
        except KbuildError as err:
            # Every later target of this build reports the same error.
            self._prepare_error = err
            self.record.error = str(err)
            self._start_log(stale)
            self._log_line(f"E: {err}")
            self._write_metadata()
            raise

    def _start_log(self, stale: list[str]) -> None:
        """build.log's first lines (once): the reproducer and the compiler's
        version, as KernelCI reads them for a failed build too; and the
        reproducer as an executable reproducer.sh."""
        if self._log_started:
            return
        self._log_started = True
        line = self.reproducer()
        self._log_line(f"# to reproduce this build: {line}")
        self._log_line(f"# compiler: {self.record.toolchain.get('version') or 'unknown'}")
        if stale:
            self._log_line(f"I: removed an earlier build's files from the output dir: {stale}")
        assert self._log is not None
        self._log.flush()  # a follower of build.log (kbuild -v) starts after these lines
        try:
            reproducers.write_script(self.output_dir / REPRODUCER, line, self.id)
        except OSError as err:
            self._log_line(f"W: cannot write {REPRODUCER}: {err.strerror or err}")

    def shell(self) -> int:
        """An interactive shell in this build's environment (kbuild --shell;
        after prepare()): its runtime, the tree, env, make variables and
        build dir. Returns the shell's exit status."""
        assert self.build_dir is not None
        jobs = None if self.jobserver else self.jobs
        env = shells.environment(self._env(), self.makevars(), self.build_dir, jobs)
        return shells.run(self.bound, self.tree, env)

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
        if self._interrupted or self.result.status is Status.INTERRUPTED:
            self._skip_rest(f"not run: the build was {self._interrupted or 'interrupted'}")
        self._probe_results()
        self.record.finished = now()
        status = Status.ERROR if self._prepare_error else self.result.status
        if self._interrupted and status is not Status.ERROR:
            status = Status.INTERRUPTED
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
        try:
            self._write_metadata()
        except KbuildInfraError as err:
            # finish() runs in teardown and after Ctrl-C: say it, never raise.
            self.unwritten = str(err)
            with contextlib.suppress(KbuildInfraError):
                self._log_line(f"E: {err}")
        self._reserve.give_back()
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None
        if self.build_dir and self._own_build_dir:
            if self.options.keep_build_dir:
                workdirs.keep_temporary(self.build_dir)
            else:
                workdirs.remove_temporary(self.build_dir)
        if self._dir_lock is not None:
            self._dir_lock.release()
            self._dir_lock = None

    def _probe_results(self) -> None:
        """What was built, for the record: kernelrelease, vmlinux's size and
        _text, the modules (files this build made only), the totals, the machine."""
        r = self.record
        r.count()
        r.hardware = probes.hardware(self.build_dir)
        if self.build_dir is None or not self._since:
            return
        r.kernelrelease = probes.kernelrelease(self.build_dir)

        def made(name: str) -> bool:
            assert self.build_dir is not None
            try:
                return (self.build_dir / name).stat().st_mtime >= self._since
            except OSError:
                return False

        # Current: made by this build, or checked by make when a target that
        # links vmlinux (or builds the modules) passed (an incremental dir).
        passed = {n for n, t in self.result.targets.items() if t.status is Status.PASS}
        linked = bool(passed & _LINKS_VMLINUX)
        runtime_ok = self._rt is not None and self._log is not None and not self._interrupted
        if (linked or made("vmlinux")) and (self.build_dir / "vmlinux").is_file() and runtime_ok:
            assert self._rt is not None
            tool = probes.size_tool(self.makevars())
            r.vmlinux.update(probes.vmlinux_size(self._rt, self.build_dir, tool))
        if linked or made("System.map"):
            r.vmlinux["text_offset"] = probes.text_offset(self.build_dir / "System.map")
        if "modules" in passed or made("modules.order"):
            r.modules = probes.modules(self.build_dir)
        # A build that stopped after its config (target config only) wrote
        # no kernel.release (or an incremental dir's is an older run's): ask
        # make, with this build's ARCH, O= and variables.
        current = made("include/config/kernel.release") or linked or "modules" in passed
        if "config" in passed and not current and runtime_ok:
            assert self._rt is not None
            argv = self.make_command(["-s", "kernelrelease"])
            release = probes.make_kernelrelease(self._rt, argv, self.tree, self._env())
            r.kernelrelease = release or r.kernelrelease

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
        return (
            target.arch_reason(self.arch)
            or self._config_reason(target)
            or self._missing_optional_tool(target)
        )

    def _missing_optional_tool(self, target: Target) -> str | None:
        """Why *target* skips: a tool of its ``skip_without`` is missing."""
        if self._rt is None or not target.skip_without:
            return None
        rt = self._rt
        missing = [f"{t} (Debian: {p})" for t, p in target.skip_without.items() if not rt.which(t)]
        if not missing:
            return None
        return f"{target.name} needs {', '.join(missing)}, which runtime {rt.name} does not have"

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
            z = compressions.get(self.options.compression)
            extra = {z.tool: z.package} if z.tool and target.compresses() else {}
            check_target_tools(self.bound, target, self.build_dir, extra)
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
        self._log_line(f"# target {target.name}")
        start_offset = log.tell()
        cache_log = cachestats.log_path(self.wrapper, self._env())
        cache_offset = cachestats.log_size(cache_log)
        started, since = time.monotonic(), time.time() - 1  # 1 s: coarse file mtimes
        self._limit = self.timeout_of(target.name) or 0.0
        self._deadline = started + self._limit if self._limit else None
        status, reason, rc = Status.PASS, "", 0
        problems: list[str] = []  # commands that failed without stopping the target
        failed: list[str] = []  # the command that failed the target: its outputs are broken
        self._target = target
        try:
            if target.kind == "config":
                status, reason = self._configure()
            elif target.kind == "boot":
                return self._boot(target, started, start_offset)
            elif target.kind == "kunit":
                return self._kunit(target, started, start_offset)
            else:
                z = self.options.compression
                for cmd in target.expanded_commands(self.arch, str(self.build_dir), z):
                    rc = self._run(cmd)
                    if rc != 0 and target.tolerates(cmd):
                        problems.append(f"{shlex.join(cmd[:2])} exited {rc}")
                        rc = 0
                    elif rc != 0:
                        status, reason = Status.FAIL, f"{shlex.join(cmd[:2])} failed"
                        failed = cmd
                        break
        except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM (signals.Terminated)
            took = time.monotonic() - started
            interrupted = TargetResult(
                target.name, Status.INTERRUPTED, took, reason=str(err) or "interrupted (Ctrl-C)"
            )
            self._record(interrupted)
            self._interrupted = self._interrupted or interrupted.reason
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
        finally:
            self._target = None
        duration = time.monotonic() - started
        log.flush()
        end_offset = log.tell()
        text = logscan.read_slice(self.output_dir / BUILD_LOG, start_offset, end_offset)
        # In a container the tools print the tree and build dir as mounted there.
        guest = (GUEST_TREE, GUEST_BUILD) if isinstance(self.runtime, ContainerRuntime) else ()
        diags = diagnostics.parse(
            text, tree=str(self.tree), build_dir=str(self.build_dir), guest=guest
        )
        counts = diagnostics.summary(diags)
        firsts = diagnostics.first_errors(diags)
        status, reason = target.judge(
            status, reason, problems, [f"{d.file}: {d.headline}" for d in firsts], self.build_dir
        )
        # The compiler OOM-killed, a full disk, the engine: the machine broke it.
        broke = infra.classify(text, rc) if status is Status.FAIL else None
        if broke is not None:
            status, reason = Status.ERROR, self._infra_reason(broke)
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
            result.errors = [baselines.marked(d.headline, new.get(d.key)) for d in firsts]
            result.errors = result.errors or [reason]
        if status not in (Status.PASS, Status.WARNING):
            z = self.options.compression
            artifacts.keep_made(
                target, self.arch, self.build_dir, self.output_dir, result, since, z, failed
            )
        else:
            assert self.build_dir is not None
            if status is Status.WARNING:  # passed with problems: say which
                result.errors = [d.headline for d in firsts] or problems or [reason]
            z = self.options.compression
            try:
                artifacts.collect(
                    target, self.arch, self.build_dir, self.output_dir, result, z, since
                )
            except KbuildInfraError as err:
                # The results dir filled up: an ERROR of the machine, said
                # with the free space, as a full build dir is.
                self._log_line(f"E: {err}")
                broke = infra.classify(str(err))
                result.status, result.reason = Status.ERROR, str(err)
                if broke is not None:
                    result.reason, result.infra = self._infra_reason(broke), broke.name
                    result.retryable = broke.retryable
                result.log_end = log.tell()
                return result
            failon.judge(result, self.options.fail_on)
        return result

    def _infra_reason(self, broke: infra.InfraFailure) -> str:
        """What broke the target, with the free space where it matters."""
        if not broke.free_space:
            return broke.reason
        dirs = {"build dir": self.build_dir, "results dir": self.output_dir}
        return f"{broke.reason} ({workdirs.free_space(dirs)})"

    def _boot(self, target: Target, started: float, start_offset: int) -> TargetResult:
        """Boot the kernel under QEMU with a freshly packed initramfs (boot.py)."""
        assert self._log is not None and self.build_dir is not None
        machine = boots.Machine.load(self.arch.name)
        if machine is None:
            why = f"boot: no QEMU machine for arch {self.arch.name} (data/boot/)"
            return TargetResult(target.name, Status.SKIP, reason=why)
        self._boot_tries += 1
        boots.keep_earlier_console(self.output_dir, self._boot_tries)
        try:
            return self._boot_once(target, machine, started, start_offset)
        except KbuildInfraError as err:  # QEMU, its firmware or the init's compiler
            self._log_line(f"E: {err}")
            took = time.monotonic() - started
            error = TargetResult(target.name, Status.ERROR, took, reason=str(err))
            error.log_start, error.log_end = start_offset, self._log.tell()
            return error

    def _boot_once(
        self, target: Target, machine: boots.Machine, started: float, start_offset: int
    ) -> TargetResult:
        assert self._log is not None and self.build_dir is not None
        boots.check_host(machine)
        tc = self.record.toolchain
        cache = Path(self.options.cache_dir or self.output_dir.parent / ".kbuild-cache") / "boot"
        init = initramfs.build_init(
            tree=self.tree,
            build_dir=self.build_dir,
            cache=cache / f"{self.arch.name}-{self.toolchain.name}",
            argv=initramfs.compiler_argv(
                machine.libc_compiler or str(tc["compiler"]),
                self.arch.cross_compile.rstrip("-"),
                machine.init_cflags,
            ),
            compiler_version=str(tc.get("version") or ""),
            run=self._run,
            log=self._log_line,
            libc=bool(machine.libc_compiler),
        )
        initrd = self.output_dir / boots.INITRAMFS
        initrd.write_bytes(initramfs.cpio(init.read_bytes()))
        release = (self.build_dir / "include/config/kernel.release").read_text().strip()
        own = dict(self.spec.target_timeouts).get(target.name)
        limit = float(own) if own else min(self.options.timeout or 1e9, boots.DEFAULT_TIMEOUT)
        kernel = self.output_dir / os.path.basename(self.arch.kernel_image_path)
        setup = boots.BootSetup(
            machine, kernel, initrd, release, self.output_dir, limit, self._boot_tries
        )
        fifo = self.jobserver
        out = boots.run(setup, self._log, (lambda: jobservers.slot(fifo)) if fifo else nullcontext)
        out.facts["consoles"] = [p.name for p in boots.iter_consoles(self.output_dir)]
        took = time.monotonic() - started
        result = TargetResult(target.name, out.status, took, out.reason, boot=out.facts)
        result.errors = [] if out.status is Status.PASS else out.errors
        result.retryable = out.retryable
        result.infra = "qemu" if out.status is Status.ERROR else ""
        result.log_start, result.log_end = start_offset, self._log.tell()
        kept = [*boots.iter_consoles(self.output_dir), *out.files[1:]]
        result.artifacts = [Artifact.of(p) for p in kept if p.is_file()]
        return result

    def _kunit(self, target: Target, started: float, start_offset: int) -> TargetResult:
        """Run the kernel's KUnit suites: UML directly, others under QEMU (kunit.py)."""
        assert self._log is not None and self.build_dir is not None
        own = dict(self.spec.target_timeouts).get(target.name)
        limit = float(own) if own else min(self.options.timeout or 1e9, kunits.DEFAULT_TIMEOUT)
        setup = kunits.KunitSetup(
            name=target.name,
            arch=self.arch.name,
            uml=self.arch.srcarch == "um",
            kernel=self.output_dir / os.path.basename(self.arch.kernel_image_path),
            release=probes.kernelrelease(self.build_dir) or "",
            output_dir=self.output_dir,
            timeout=limit,
        )
        fifo = self.jobserver
        try:
            result = kunits.run(
                setup, self._log, (lambda: jobservers.slot(fifo)) if fifo else nullcontext
            )
        except KbuildInfraError as err:  # QEMU or its firmware missing, no machine
            self._log_line(f"E: {err}")
            result = TargetResult(target.name, Status.ERROR, reason=str(err))
        result.duration = time.monotonic() - started
        result.log_start, result.log_end = start_offset, self._log.tell()
        return result

    def _configure(self) -> tuple[Status, str]:
        assert self.build_dir is not None
        s = self.spec
        # The arch's fragments come first, so the build's own can still override them.
        fragments = (*self.arch.kconfig_add, *s.kconfig_add)
        plan = kcfg.plan(
            s.kconfig, fragments, self.tree, s.base_dir, self.build_dir, self._log_line
        )
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
        try:
            self._log.write(line.encode() + b"\n")
        except OSError as err:
            path = self.output_dir / BUILD_LOG
            raise KbuildInfraError(f"cannot write {path}: {err.strerror or err}") from None

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

    def _env(self) -> dict[str, str]:
        # The wrapper's tuning yields to the build's env; its cache dir,
        # remote and stats log do not.
        build_dir, o = str(self.build_dir), self.options
        cache_dir = str(o.cache_dir) if o.cache_dir else None
        return {
            **self.wrapper.default_environment(build_dir),
            **dict(self.spec.env),
            **self.repro.environment(self.tree, self.build_dir),
            **self.wrapper.environment(build_dir, cache_dir, o.cache_remote),
        }

    def _initial_record(self) -> BuildRecord:
        record = BuildRecord.initial(
            self.spec,
            self.options,
            toolchain=self.toolchain.describe(self.arch, self._cross),
            makevars=self.makevars(),
            runtime=self.runtime.describe(),
            jobs=None if self.jobserver else self.jobs,
            jobserver=self.jobserver,
            reproducer=self.reproducer(),
            build_dir=self.build_dir,
            tree=self.tree,
            tools=self._tools,
        )
        record.reproducible = self.repro.record(self.tree, self.build_dir)
        return record
