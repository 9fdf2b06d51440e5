"""How a build runs a command: make's variables and arguments, the
environment, the runtime it is bound to, the jobserver slot, the deadline of
the running target and the line in build.log. The one object the step
runners, kconfig and the boot's initramfs get to run anything."""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import BinaryIO

from ..definitions.arch import Arch
from ..definitions.targets import Target, with_dependencies
from ..definitions.toolchain import Toolchain, Wrapper
from ..errors import KbuildInfraError, TargetTimeout
from ..options import BuildOptions
from ..results import BUILD_LOG, COMMAND_ECHO
from ..run import jobserver as jobservers
from ..runtime.base import Runtime, Workspace
from ..spec import BuildSpec
from . import probes, reproducible
from .reproducible import Plan as Reproducible


class MakeEnv:
    """The make environment of one build. *build_dir*, *runtime* (bound)
    and *log* are set when the build is prepared; until then only what
    make would be given (makevars, env) can be asked."""

    def __init__(
        self,
        *,
        tree: Path,
        spec: BuildSpec,
        options: BuildOptions,
        arch: Arch,
        toolchain: Toolchain,
        wrapper: Wrapper,
        repro: Reproducible,
        jobserver: Path | None,
        output_dir: Path,
    ) -> None:
        self.tree, self.spec, self.options = tree, spec, options
        self.arch, self.toolchain, self.wrapper, self.repro = arch, toolchain, wrapper, repro
        # A user's CROSS_COMPILE= make variable is the prefix of CC too.
        self.cross = dict(spec.make_variables).get("CROSS_COMPILE")
        self.jobs = options.jobs or os.cpu_count() or 1
        # make gets its jobs from a shared jobserver's FIFO, not --jobs; a
        # container runtime bind-mounts it (Workspace.jobserver).
        self.jobserver = jobserver
        self.log_path = output_dir / BUILD_LOG
        self.build_dir: Path | None = None
        self.runtime: Runtime | None = None  # bound to this build (Build.prepare)
        self.log: BinaryIO | None = None
        self._target_vars: dict[str, str] | None = None  # the running target's
        self._deadline: float | None = None
        self._limit = 0.0
        # The running target's seconds waiting for a jobserver slot so far,
        # and since when (time.time()) it waits now, if it does.
        self.queued = 0.0
        self.waiting_since: float | None = None

    @classmethod
    def for_build(
        cls,
        tree: Path,
        spec: BuildSpec,
        options: BuildOptions,
        jobserver: Path | None,
        output_dir: Path,
    ) -> MakeEnv:
        """The make environment of *spec* built with *options*."""
        # The kernel image to build: a plan's kernel_image for this build,
        # else the run's --kbuild-kernel-image / kbuild -I, else the arch's.
        arch = Arch.load(spec.arch).with_kernel_image(
            spec.kernel_image or options.kernel_image or ""
        )
        wrapper = Wrapper.load(spec.wrapper)
        repro = reproducible.plan(
            tree,
            enabled=options.reproducible,
            make_variables=dict(spec.make_variables),
            env=dict(spec.env),
            environment=os.environ,
            map_build_dir=wrapper.prefix_map_build_dir,
            arch=arch.name,
        )
        toolchain = Toolchain.load(spec.toolchain)
        return cls(
            tree=tree,
            spec=spec,
            options=options,
            arch=arch,
            toolchain=toolchain,
            wrapper=wrapper,
            repro=repro,
            jobserver=jobserver,
            output_dir=output_dir,
        )

    @property
    def bound(self) -> Runtime:
        """The runtime bound to this build (after Build.prepare())."""
        if self.runtime is None:
            raise KbuildInfraError(f"build {self.spec.id}: runtime used before prepare()")
        return self.runtime

    def tool_commands(self) -> dict[str, list[str]]:
        """The versions to record: make, the compiler, the linker, the host tools."""
        host_tools = set(self.arch.host_tools)
        for name in with_dependencies(self.spec.targets):
            host_tools.update(Target.load(name).host_tools)
        compiler = self.toolchain.compiler(self.arch, cross_compile=self.cross)
        minimum = probes.minimum_command(self.tree, self.toolchain.min_tool(), self.arch.srcarch)
        return probes.tool_commands(compiler, self.makevars(), host_tools, minimum)

    def workspace(self) -> Workspace:
        """The directories and toolchain this build asks of its runtime."""
        assert self.build_dir is not None
        cache = self.options.cache_dir
        directory = self.toolchain.directory
        return Workspace(
            arch=self.arch.name,
            toolchain=self.toolchain.image_toolchain,
            tree=self.tree,
            build_dir=self.build_dir,
            cache_dir=Path(cache) if self.wrapper.command and cache else None,
            jobserver=self.jobserver,
            toolchain_dir=Path(directory) if directory else None,
        )

    def makevars(self) -> dict[str, str]:
        """Every variable passed to make: the toolchain's (for a user's
        CROSS_COMPILE, when given), then the user's (with reproducible mode's
        flags appended to a KCFLAGS/KAFLAGS there)."""
        out = self.toolchain.makevars(self.arch, self.wrapper, cross_compile=self.cross)
        out.update(self.spec.make_variables)
        out.update(self.repro.makevars(self.tree, self.build_dir))
        return out

    def env(self) -> dict[str, str]:
        """What every command gets in its environment. The wrapper's tuning
        yields to the build's env; its cache dir, remote and stats log do not."""
        build_dir, o = str(self.build_dir), self.options
        cache_dir = str(o.cache_dir) if o.cache_dir else None
        return {
            **self.wrapper.default_environment(build_dir),
            **dict(self.spec.env),
            **self.repro.environment(self.tree, self.build_dir),
            **self.wrapper.environment(build_dir, cache_dir, o.cache_remote),
        }

    @contextlib.contextmanager
    def target(self, target: Target, limit: float) -> Iterator[None]:
        """While *target* runs: its make variables (computed once), its
        deadline, *limit* seconds from now (0: none) plus the time it waits
        for jobserver slots, and that wait (`queued`), from 0."""
        given = dict(self.spec.make_variables)
        self._target_vars = target.adjust_makevars(self.makevars(), given)
        self._limit = limit
        self._deadline = time.monotonic() + limit if limit else None
        self.queued = 0.0
        try:
            yield
        finally:
            self._target_vars, self._deadline = None, None

    def make_command(self, args: Iterable[str]) -> list[str]:
        """make with this build's jobs, O= and variables, then *args*."""
        assert self.build_dir is not None
        argv = ["make"] if self.options.verbose else ["make", "--silent"]
        if not self.options.fail_fast:
            argv.append("--keep-going")
        if self.jobserver is None:
            argv.append(f"--jobs={self.jobs}")
        argv.append(f"O={self.build_dir}")
        makevars = self._target_vars if self._target_vars is not None else self.makevars()
        argv += [f"{k}={v}" for k, v in makevars.items()]
        return argv + list(args)

    def slot(self) -> Callable[[], AbstractContextManager[None]]:
        """What holds one job of the shared jobserver (nothing without one)."""
        fifo = self.jobserver
        return (lambda: jobservers.slot(fifo)) if fifo else nullcontext

    def run(self, cmd: list[str]) -> int:
        """Run *cmd* on the bound runtime, its output into build.log after
        its echo line; its exit status. Kbuild runs in the tree (writing
        only under O=); every other tool runs in the build directory, so
        nothing ever writes in the tree. Past the deadline: TargetTimeout."""
        assert self.log is not None and self.build_dir is not None
        is_make = cmd[0] == "make"
        argv = self.make_command(cmd[1:]) if is_make else cmd
        if is_make and self.jobserver is not None:
            argv = jobservers.wrap(argv, self.jobserver)
        self.line(f"{COMMAND_ECHO}{shlex.join(argv)}")
        # With a jobserver every command holds a slot: make's first job runs
        # without a token, so the slot is taken here for it.
        try:
            with self._slot():
                deadline = self._deadline
                timeout = max(0.1, deadline - time.monotonic()) if deadline else None
                rc = self.bound.run(
                    argv,
                    cwd=self.tree if is_make else self.build_dir,
                    env=self.env(),
                    output=self.log,
                    timeout=timeout,
                )
        except subprocess.TimeoutExpired:
            raise TargetTimeout(self._limit, argv[0]) from None
        except OSError as err:
            if err.errno == errno.ENOSPC:
                raise KbuildInfraError(f"no space left on device while running {argv[0]}") from None
            raise
        self.log.seek(0, os.SEEK_END)
        if rc != 0:
            self.line(f"E: exit status {rc}")
        return rc

    @contextlib.contextmanager
    def _slot(self) -> Iterator[None]:
        """Hold a slot (`slot`); the wait for it counts in `queued`, not
        against the target's timeout."""
        waiting = time.monotonic()
        self.waiting_since = time.time()
        try:
            with self.slot()():
                waited = time.monotonic() - waiting
                self.waiting_since = None
                self.queued += waited
                if self._deadline is not None:
                    self._deadline += waited
                yield
        finally:
            self.waiting_since = None

    def line(self, text: str) -> None:
        """One line into build.log; a log that cannot be written is an
        infrastructure error naming it."""
        assert self.log is not None
        try:
            self.log.write(text.encode() + b"\n")
        except OSError as err:
            raise KbuildInfraError(f"cannot write {self.log_path}: {err.strerror or err}") from None

    def offset(self) -> int:
        """Where build.log ends now."""
        assert self.log is not None
        return self.log.tell()
