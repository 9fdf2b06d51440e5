"""Run one build (a BuildSpec, or the arguments of the Python API) on a
Runtime, target by target, writing build.log, artifacts and metadata.json."""

from __future__ import annotations

import errno
import os
import platform
import shlex
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import Any, BinaryIO

from . import cachestats, logscan
from . import jobserver as jobservers
from . import kconfig as kcfg
from . import runtime as runtimes
from .arch import Arch
from .errors import KbuildError, KbuildInfraError, KbuildUserError, ToolNotFound
from .matrix import RESERVED_MAKE_VARIABLES, BuildSpec, check_tree, kconfig_id
from .metadata import host_info, now, record_target, runtime_facts, write_metadata
from .results import BUILD_LOG, METADATA, Artifact, BuildResult, Status, TargetResult
from .runtime.base import Runtime, Workspace
from .runtime.container import ContainerOptions
from .targets import Target, default_targets, with_dependencies
from .toolchain import Toolchain, Wrapper, redact
from .toolcheck import check_target_tools, check_tools

METADATA_SCHEMA = 1


class Build:
    """One kernel build: ``Build(tree, target_arch="arm64", toolchain="gcc").run()``.

    Targets run in dependency order; each gets a TargetResult. Outputs land in
    *output_dir* (build.log, metadata.json, artifacts); objects in *build_dir*
    (a fresh temporary directory unless given).
    """

    def __init__(
        self,
        tree: str | Path = ".",
        target_arch: str | None = None,
        toolchain: str = "gcc",
        kconfig: str = "defconfig",
        kconfig_add: Iterable[str] = (),
        targets: Iterable[str] | None = None,
        make_variables: Mapping[str, str] | None = None,
        environment: Mapping[str, str] | None = None,
        wrapper: str = "none",
        runtime: str | Runtime = "local",
        jobs: int | None = None,
        output_dir: str | Path | None = None,
        build_dir: str | Path | None = None,
        fail_fast: bool = False,
        build_id: str | None = None,
        kconfig_base_dir: str | Path | None = None,
        cache_dir: str | Path | None = None,
        keep_build_dir: bool = False,
        image: str | None = None,
        pull: str = "missing",
        network: str = "none",
        cache_remote: str | None = None,
        jobserver: str | Path | None = None,
    ) -> None:
        self.tree = check_tree(Path(tree).resolve(), "tree")
        self.arch = Arch.load(target_arch or platform.machine(), "target arch")
        self.toolchain = Toolchain.load(toolchain, "toolchain")
        self.wrapper = Wrapper.load(wrapper, "wrapper")
        self.kconfig = kconfig
        self.kconfig_add = tuple(kconfig_add)
        for frag in self.kconfig_add:
            kcfg.validate_fragment(frag)
        self.targets = list(targets) if targets is not None else default_targets()
        for name in self.targets:
            Target.load(name, "targets")
        self.make_variables = dict(make_variables or {})
        for name, why in RESERVED_MAKE_VARIABLES.items():
            if name in self.make_variables:
                raise KbuildUserError(f"make variable {name} cannot be set: {why}")
        self.environment = dict(environment or {})
        if isinstance(runtime, str):
            options = ContainerOptions(image=image, pull=pull, network=network)
            self.runtime = runtimes.make(runtime, "runtime", options)
        else:
            self.runtime = runtime
        # The runtime bound to this build's workspace (prepare() binds it).
        self._rt: Runtime | None = None
        self.jobs = jobs or os.cpu_count() or 1
        # The FIFO of a jobserver shared with other builds (jobserver.py):
        # make then gets its jobs from there, not from --jobs. A container
        # runtime bind-mounts this path at the same place.
        self.jobserver = Path(jobserver) if jobserver else None
        self.fail_fast = fail_fast
        self.id = build_id or f"{self.arch.name}-{self.toolchain.name}-{kconfig_id(kconfig)}"
        self.output_dir = Path(output_dir or Path("kbuild-results") / self.id).resolve()
        self._own_build_dir = build_dir is None
        self.build_dir = Path(build_dir).resolve() if build_dir else None
        if self.build_dir is not None:
            # prepare() empties the build directory: never let that be the
            # tree, the results or anything holding them.
            for what, path in (("kernel tree", self.tree), ("output directory", self.output_dir)):
                if path == self.build_dir or self.build_dir in path.parents:
                    raise KbuildUserError(
                        f"build directory {str(self.build_dir)!r} would be emptied, but it holds "
                        f"the {what} {str(path)!r}; choose a directory of its own"
                    )
        self.keep_build_dir = keep_build_dir
        self.kconfig_base_dir = Path(kconfig_base_dir or Path.cwd())
        self.cache_dir = str(cache_dir) if cache_dir else None
        if cache_remote:
            self.wrapper.check_remote(cache_remote, "cache remote")
        self.cache_remote = cache_remote or None
        self.result = BuildResult(self.id, self.output_dir)
        self.extra_metadata: dict[str, Any] = {}
        self._log: BinaryIO | None = None
        self._meta: dict[str, Any] = {}
        self._prepared = False
        self._prepare_error: KbuildInfraError | None = None

    @classmethod
    def from_spec(cls, spec: BuildSpec, tree: Path, **kwargs: Any) -> Build:
        """A Build for one matrix entry."""
        return cls(
            tree,
            target_arch=spec.arch,
            toolchain=spec.toolchain,
            kconfig=spec.kconfig,
            kconfig_add=spec.kconfig_add,
            targets=spec.targets,
            make_variables=dict(spec.make_variables),
            environment=dict(spec.env),
            wrapper=spec.wrapper,
            build_id=spec.id,
            kconfig_base_dir=spec.base_dir,
            **kwargs,
        )

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
        """The one-line ``kbuild`` command that repeats this build."""
        argv = [
            "kbuild",
            f"--directory={self.tree}",
            f"--target-arch={self.arch.name}",
            f"--toolchain={self.toolchain.name}",
            f"--kconfig={kcfg.absolute(self.kconfig, self.kconfig_base_dir)}",
        ]
        argv += [
            f"--kconfig-add={kcfg.absolute(f, self.kconfig_base_dir)}" for f in self.kconfig_add
        ]
        argv += [f"--wrapper={self.wrapper.name}"]
        argv += (self._rt or self.runtime).reproducer_args()
        argv += ["--fail-fast"] if self.fail_fast else []
        argv += [f"--environment={k}={v}" for k, v in sorted(self.environment.items())]
        argv += [f"{k}={v}" for k, v in sorted(self.make_variables.items())]
        argv += self.targets
        return shlex.join(argv)

    def makevars(self) -> dict[str, str]:
        """Every variable passed to make: the toolchain's, then the user's."""
        out = self.toolchain.makevars(self.arch, self.wrapper)
        out.update(self.make_variables)
        return out

    def make_command(self, args: Iterable[str]) -> list[str]:
        assert self.build_dir is not None
        argv = ["make", "--silent"]
        if not self.fail_fast:
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
        except OSError as err:
            # Nowhere to keep a log or metadata.json: the error alone says why.
            self._prepare_error = _dir_error("output dir", self.output_dir, err)
            raise self._prepare_error from None
        self._meta = self._initial_metadata()
        self._write_metadata()
        try:
            self._make_build_dir()
            self._rt = self.runtime.bind(self.workspace())
            facts = runtime_facts(self._rt, self.tree, self._meta["toolchain"])
            self._meta.update(facts, reproducer=self.reproducer())
            self._write_metadata()
            check_tools(self._rt, self.arch, self.toolchain, self.wrapper)
        except KbuildInfraError as err:
            # Every later target of this build reports the same error.
            self._prepare_error = err
            self._meta["error"] = str(err)
            self._log_line(f"E: {err}")
            self._write_metadata()
            raise

    def _make_build_dir(self) -> None:
        """An empty build directory: a new temporary one, or the one given."""
        try:
            if self.build_dir is None:
                self.build_dir = Path(tempfile.mkdtemp(prefix=f"kbuild-{self.id}-"))
                self._meta["build_dir"] = str(self.build_dir)
            else:
                if self.build_dir.exists():
                    shutil.rmtree(self.build_dir)
                self.build_dir.mkdir(parents=True)
        except OSError as err:
            raise _dir_error(
                "build dir", self.build_dir or Path(tempfile.gettempdir()), err
            ) from None

    def workspace(self) -> Workspace:
        """The directories and toolchain this build asks of its runtime."""
        assert self.build_dir is not None
        uses_cache = bool(self.wrapper.command and self.cache_dir)
        return Workspace(
            arch=self.arch.name,
            toolchain=self.toolchain.name,
            tree=self.tree,
            build_dir=self.build_dir,
            cache_dir=Path(self.cache_dir) if uses_cache and self.cache_dir else None,
            jobserver=self.jobserver,
        )

    def finish(self) -> None:
        """Write the final metadata.json; remove a temporary build directory."""
        if not self._prepared or not self._meta:  # not prepared, or no output dir
            return
        self._meta["finished"] = now()
        status = Status.ERROR if self._prepare_error else self.result.status
        self._meta["status"] = status.value
        # Once the log is closed (a second finish(), after Ctrl-C) the
        # runtime is not asked for the wrapper's report again.
        if self._log is not None and self._rt is not None:
            stats = cachestats.report(self.wrapper, self._rt, self.tree, self._env())
            if stats:
                self._meta["wrapper"]["stats"] = stats
        if self.build_dir is not None:
            cache_log = cachestats.log_path(self.wrapper, self._env())
            counts = cachestats.counts(self.wrapper, cache_log, 0, None)
            if counts:
                self._meta["wrapper"]["counts"] = counts
        self._write_metadata()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.build_dir and self._own_build_dir and not self.keep_build_dir:
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
        failed = self.failed_dependency(name)
        if failed is not None:
            reason = f"dependency {failed} did not pass"
            return self._record(TargetResult(name, Status.SKIP, reason=reason))
        if self.fail_fast and any(r.status is Status.FAIL for r in self.result.targets.values()):
            return self._record(
                TargetResult(name, Status.SKIP, reason="fail-fast: an earlier target failed")
            )
        unmet = target.arch_reason(self.arch) or self._config_reason(target)
        if unmet:
            return self._record(TargetResult(name, Status.SKIP, reason=unmet))
        error = self.check_target_tools(name)
        return error if error is not None else self._record(self._execute(target))

    def check_target_tools(self, name: str) -> TargetResult | None:
        """Before *name* runs (after its dependencies): its ERROR result, recorded,
        when a host tool it needs is missing, else None (also when it will skip)."""
        done = self.result.targets.get(name)
        if done is not None:
            return done if done.status is Status.ERROR else None
        target = Target.load(name)
        if self.failed_dependency(name) or target.arch_reason(self.arch):
            return None
        if self._config_reason(target):
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
            self._record(
                TargetResult(
                    target.name,
                    Status.INTERRUPTED,
                    time.monotonic() - started,
                    reason="interrupted (Ctrl-C)",
                )
            )
            self.finish()
            raise
        except KbuildError as err:
            self._log_line(f"E: {err}")
            self._record(
                TargetResult(target.name, Status.ERROR, time.monotonic() - started, reason=str(err))
            )
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
        plan = kcfg.plan(
            self.kconfig, self.kconfig_add, self.tree, self.kconfig_base_dir, self.build_dir
        )
        self._meta["kconfig_sources"] = plan.sources
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
        try:
            with slot:
                rc = self.bound.run(argv, cwd=cwd, env=self._env(), output=self._log)
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
            record_target(self._meta, result)
            self._meta["status"] = "running"
            self._write_metadata()
        return result

    def _write_metadata(self) -> None:
        self._meta.update(self.extra_metadata)
        write_metadata(self.output_dir / METADATA, self._meta)

    def _env(self) -> dict[str, str]:
        # The wrapper's tuning yields to the build's env; its cache dir,
        # remote and stats log do not.
        build_dir = str(self.build_dir)
        return {
            **self.wrapper.default_environment(build_dir),
            **self.environment,
            **self.wrapper.environment(build_dir, self.cache_dir, self.cache_remote),
        }

    def _initial_metadata(self) -> dict[str, Any]:
        return {
            "schema": METADATA_SCHEMA,
            "build_id": self.id,
            "status": "running",
            "started": now(),
            "arch": self.arch.name,
            "toolchain": {
                "name": self.toolchain.name,
                "compiler": self.toolchain.compiler(self.arch),
                "version": None,
            },
            "kconfig": self.kconfig,
            "kconfig_add": list(self.kconfig_add),
            "make_variables": dict(self.make_variables),
            "makevars": self.makevars(),
            "env": dict(self.environment),
            "wrapper": {
                "name": self.wrapper.name,
                "cache_dir": self.cache_dir,
                **({"remote": redact(self.cache_remote)} if self.cache_remote else {}),
            },
            "runtime": self.runtime.describe(),
            "jobs": None if self.jobserver else self.jobs,
            "jobserver": {"fifo": str(self.jobserver)} if self.jobserver else None,
            "targets_requested": list(self.targets),
            "targets": {},
            "artifacts": {},
            "build_dir": str(self.build_dir),
            "tree": {"path": str(self.tree)},
            "host": host_info(),
            "reproducer": self.reproducer(),
        }


def _dir_error(what: str, path: Path, err: OSError) -> KbuildInfraError:
    """A directory the build needs cannot be made or emptied (a full disk, no
    permission): name it, and the path the system complained about."""
    where = f" ({err.filename})" if err.filename and str(err.filename) != str(path) else ""
    return KbuildInfraError(f"cannot prepare the {what} {path}{where}: {err.strerror or err}")
