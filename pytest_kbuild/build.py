"""Run one build: a BuildSpec (what) with BuildOptions (how and where) on a
Runtime, target by target -> a BuildResult with its metadata record,
writing build.log, artifacts and metadata.json."""

from __future__ import annotations

import errno
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path
from typing import Any, BinaryIO

from . import cachestats, logscan
from . import jobserver as jobservers
from . import kconfig as kcfg
from . import options as opts
from . import runtime as runtimes
from . import spec as specs
from .arch import Arch
from .errors import KbuildError, KbuildInfraError, KbuildUserError, TargetTimeout
from .metadata import BuildRecord, host_info, now, runtime_facts
from .options import BuildOptions
from .results import BUILD_LOG, Artifact, BuildResult, Status, TargetResult
from .runtime.base import Runtime, Workspace
from .runtime.container import ContainerOptions
from .spec import BuildSpec
from .targets import Target, with_dependencies
from .toolchain import Toolchain, Wrapper, redact
from .toolcheck import check_tools

# Python API keyword -> BuildSpec field, where the names differ.
_API_NAMES = {"target_arch": "arch", "environment": "env", "kconfig_base_dir": "base_dir"}
_SPEC_ARGS = {
    "arch",
    "toolchain",
    "kconfig",
    "kconfig_add",
    "targets",
    "make_variables",
    "env",
    "wrapper",
    "runtime",
    "name",
    "base_dir",
}


class Build:
    """One kernel build: ``Build(tree, target_arch="arm64", toolchain="gcc").run()``.

    Give a BuildSpec and BuildOptions, or (the convenience of the Python API)
    their fields as keywords: ``Build(tree, target_arch=..., jobs=4)``.
    Targets run in dependency order; each gets a TargetResult. Outputs land
    in *output_dir* (build.log, metadata.json, artifacts); objects in
    *build_dir* (a fresh temporary directory unless given). *runtime* is a
    Runtime object (default: the one spec.runtime names); *jobserver* the
    FIFO of a make jobserver shared with other builds.
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
        **fields: Any,
    ) -> None:
        if isinstance(runtime, str):
            fields["runtime"], runtime = runtime, None
        self.spec = spec or _spec(fields, runtime)
        self.options = _options(options or BuildOptions(), fields)
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
        self.build_dir = Path(build_dir).resolve() if build_dir else None
        self._check_build_dir()
        self._rt: Runtime | None = None  # the runtime bound to this build (prepare())
        self.record = self._initial_record()
        self.result = BuildResult(self.id, self.output_dir, record=self.record)
        self._log: BinaryIO | None = None
        self._prepared = False
        self._writable = False  # the output dir and build.log exist
        self._deadline: float | None = None  # when the running target times out
        self._timed_out = ""  # the target that timed out: later ones are skipped
        self._prepare_error: KbuildInfraError | None = None

    # -- what is built ----------------------------------------------------------
    @property
    def targets(self) -> list[str]:
        return list(self.spec.targets)

    @property
    def make_variables(self) -> dict[str, str]:
        return dict(self.spec.make_variables)

    @property
    def environment(self) -> dict[str, str]:
        return dict(self.spec.env)

    @property
    def kconfig_base_dir(self) -> Path:
        return self.spec.base_dir

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

    def reproducer(self) -> str:
        """The one-line ``kbuild`` command that repeats this build, derived
        from the declarations of BuildSpec's and BuildOptions' fields."""
        argv = ["kbuild", f"--directory={self.tree}"]
        positional: list[str] = []
        for f in specs.kbuild_fields():
            value, flag = getattr(self.spec, f.name), (f.metadata["kbuild"] or ("",))[-1]
            if f.name == "runtime":
                argv += (self._rt or self.runtime).reproducer_args()
                argv += opts.reproducer_args(self.options)
            elif f.name in ("kconfig", "kconfig_add"):
                values = [value] if isinstance(value, str) else list(value)
                argv += [f"{flag}={kcfg.absolute(v, self.spec.base_dir)}" for v in values]
            elif f.metadata["positional"]:
                positional += [f"{k}={v}" for k, v in value] if f.name != "targets" else value
            elif isinstance(value, tuple):
                argv += [f"{flag}={k}={v}" for k, v in value]
            else:
                argv.append(f"{flag}={value}")
        return shlex.join(argv + positional)

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
            self._prepare_error = _dir_error("output dir", self.output_dir, err)
            raise self._prepare_error from None
        self.record.started = now()
        self._write_metadata()
        if self.spec.skip_reason:
            return  # nothing is built, nothing is checked
        try:
            self._make_build_dir()
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

    def _check_build_dir(self) -> None:
        # prepare() empties the build directory: never let that be the
        # tree, the results or anything holding them.
        if self.build_dir is None:
            return
        for what, path in (("kernel tree", self.tree), ("output directory", self.output_dir)):
            if path == self.build_dir or self.build_dir in path.parents:
                raise KbuildUserError(
                    f"build directory {str(self.build_dir)!r} would be emptied, but it holds "
                    f"the {what} {str(path)!r}; choose a directory of its own"
                )

    def _make_build_dir(self) -> None:
        """An empty build directory: a new temporary one, or the one given."""
        try:
            if self.build_dir is None:
                self.build_dir = Path(tempfile.mkdtemp(prefix=f"kbuild-{self.id}-"))
            else:
                if self.build_dir.exists():
                    shutil.rmtree(self.build_dir)
                self.build_dir.mkdir(parents=True)
            self.record.build_dir = str(self.build_dir)
        except OSError as err:
            raise _dir_error(
                "build dir", self.build_dir or Path(tempfile.gettempdir()), err
            ) from None

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
            if r is not None and r.status is not Status.PASS:
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
        if self.spec.skip_reason:
            return self._record(TargetResult(name, Status.SKIP, reason=self.spec.skip_reason))
        failed = self.failed_dependency(name)
        if failed is not None:
            reason = f"dependency {failed} did not pass"
            return self._record(TargetResult(name, Status.SKIP, reason=reason))
        if self._timed_out:
            reason = f"target {self._timed_out} timed out: the build stopped there"
            return self._record(TargetResult(name, Status.SKIP, reason=reason))
        if self.options.fail_fast and any(
            r.status is Status.FAIL for r in self.result.targets.values()
        ):
            return self._record(
                TargetResult(name, Status.SKIP, reason="fail-fast: an earlier target failed")
            )
        unmet = target.arch_reason(self.arch) or self._config_reason(target)
        if unmet:
            return self._record(TargetResult(name, Status.SKIP, reason=unmet))
        return self._record(self._execute(target))

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
        self._deadline = started + self.options.timeout if self.options.timeout else None
        status, reason = Status.PASS, ""
        try:
            if target.kind == "config":
                status, reason = self._configure()
            else:
                for cmd in target.expanded_commands(self.arch, str(self.build_dir)):
                    if self._run(cmd) != 0:
                        status, reason = Status.FAIL, f"{shlex.join(cmd[:2])} failed"
                        break
        except KeyboardInterrupt:
            took = time.monotonic() - started
            interrupted = TargetResult(
                target.name, Status.INTERRUPTED, took, reason="interrupted (Ctrl-C)"
            )
            self._record(interrupted)
            self.finish()
            raise
        except KbuildError as err:
            if isinstance(err, TargetTimeout):
                self._timed_out = target.name
            self._log_line(f"E: {err}")
            took = time.monotonic() - started
            self._record(TargetResult(target.name, Status.ERROR, took, reason=str(err)))
            raise
        duration = time.monotonic() - started
        log.flush()
        end_offset = log.tell()
        text = logscan.read_slice(self.output_dir / BUILD_LOG, start_offset, end_offset)
        result = TargetResult(
            target.name,
            status,
            duration,
            reason,
            warnings=logscan.count_warnings(text),
            log_start=start_offset,
            log_end=end_offset,
            cache=cachestats.counts(
                self.wrapper, cache_log, cache_offset, cachestats.log_size(cache_log)
            ),
        )
        if status is Status.FAIL:
            result.errors = logscan.first_errors(text) or [reason]
        else:
            self._collect_artifacts(target, result)
        return result

    def _configure(self) -> tuple[Status, str]:
        assert self.build_dir is not None
        s = self.spec
        plan = kcfg.plan(s.kconfig, s.kconfig_add, self.tree, s.base_dir, self.build_dir)
        self.record.kconfig_sources = plan.sources
        for cmd in plan.commands:
            if self._run(cmd) != 0:
                return Status.FAIL, f"{shlex.join(cmd[:2])} failed"
        config = self.build_dir / ".config"
        if not config.is_file():
            return Status.FAIL, "no .config was produced"
        dropped = kcfg.check_options(plan.wanted, config.read_text(errors="replace"))
        if dropped:
            lines = [str(d) for d in dropped]
            self._log_line("E: options asked for but missing from the final .config:")
            for line in lines:
                self._log_line(f"E:   {line}")
            return Status.FAIL, "; ".join(lines)
        return Status.PASS, ""

    def _config_reason(self, target: Target) -> str | None:
        if not (target.requires_config or target.conflicts_config) or self.build_dir is None:
            return None
        config = self.build_dir / ".config"
        text = config.read_text(errors="replace") if config.is_file() else ""
        missing = kcfg.unmet(target.requires_config, text)
        if missing:
            return f"{target.name} needs {', '.join(missing)}, which the .config does not set"
        conflicts = kcfg.met(target.conflicts_config, text)
        if conflicts:
            return f"{target.name} does not apply: the .config sets {', '.join(conflicts)}"
        return None

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
        self._log_line(f"$ {shlex.join(argv)}")
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
            raise TargetTimeout(self.options.timeout or 0, argv[0]) from None
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

    def _collect_artifacts(self, target: Target, result: TargetResult) -> None:
        assert self.build_dir is not None
        for name, rel in target.expanded_artifacts(self.arch).items():
            src = self.build_dir / rel
            if not src.is_file():
                result.status = Status.FAIL
                result.reason = f"{target.name} passed make but {rel} was not produced"
                result.errors.append(result.reason)
                continue
            dest = self.output_dir / name
            try:
                shutil.copyfile(src, dest)
            except OSError as err:
                if err.errno == errno.ENOSPC:
                    raise KbuildInfraError(
                        f"no space left on device copying {name} to {dest}"
                    ) from None
                raise
            result.artifacts.append(Artifact.of(dest))

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
        s, o = self.spec, self.options
        remote = {"remote": redact(o.cache_remote)} if o.cache_remote else {}
        cache_dir = str(o.cache_dir) if o.cache_dir else None
        return BuildRecord(
            build_id=self.id,
            arch=self.arch.name,
            toolchain={
                "name": self.toolchain.name,
                "compiler": self.toolchain.compiler(self.arch),
                "version": None,
            },
            kconfig=s.kconfig,
            kconfig_add=list(s.kconfig_add),
            make_variables=dict(s.make_variables),
            makevars=self.makevars(),
            env=dict(s.env),
            wrapper={"name": self.wrapper.name, "cache_dir": cache_dir, **remote},
            runtime=self.runtime.describe(),
            jobs=None if self.jobserver else self.jobs,
            jobserver={"fifo": str(self.jobserver)} if self.jobserver else None,
            targets_requested=list(s.targets),
            options={k: v for k, v in opts.plain(o).items() if k != "cache_remote"},
            reproducer=self.reproducer(),
            build_dir=str(self.build_dir) if self.build_dir else None,
            tree={"path": str(self.tree)},
            host=host_info(),
            skip_reason=s.skip_reason or None,
        )


def _spec(fields: dict[str, Any], runtime: Runtime | None) -> BuildSpec:
    """The BuildSpec of the API's keywords (removed from *fields*)."""
    values = {_API_NAMES.get(k, k): v for k, v in fields.items()}
    given = {k: v for k, v in values.items() if k in _SPEC_ARGS}
    for k in list(fields):
        if _API_NAMES.get(k, k) in _SPEC_ARGS:
            del fields[k]
    given.setdefault("arch", platform.machine())
    known: tuple[str, ...] = specs.BUILTIN_RUNTIMES
    if runtime is not None:
        given["runtime"], known = runtime.name, (*known, runtime.name)
    return BuildSpec.make(**given, runtimes=known, origin="Build()")


def _options(base: BuildOptions, fields: dict[str, Any]) -> BuildOptions:
    """*base* with the API's option keywords; an unknown keyword is a TypeError."""
    try:
        return opts.replace(base, **fields)
    except TypeError as err:
        raise TypeError(f"Build(): {err}") from None


def _dir_error(what: str, path: Path, err: OSError) -> KbuildInfraError:
    """A directory the build needs cannot be made or emptied (a full disk, no
    permission): name it, and the path the system complained about."""
    where = f" ({err.filename})" if err.filename and str(err.filename) != str(path) else ""
    return KbuildInfraError(f"cannot prepare the {what} {path}{where}: {err.strerror or err}")
