"""One runner per target kind (data/target/*.yaml's ``kind:``): what a
target does once its dependencies passed. A runner gets the Step (the
target, the make environment and the build's record) and returns either
what its commands did (Made, which the verdict judges) or, for a boot or a
KUnit run that judges itself, the TargetResult."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import kconfig as kcfg
from ..boot import initramfs
from ..boot import kunit as kunits
from ..boot import qemu as boots
from ..definitions.targets import Target
from ..diagnostics import infra
from ..errors import KbuildInfraError
from ..results import Artifact, Status, TargetResult
from . import probes, workdirs
from .make import MakeEnv
from .record import BuildRecord


@dataclass(frozen=True)
class Step:
    """One try of one target."""

    target: Target
    make: MakeEnv
    output_dir: Path
    record: BuildRecord  # the kconfig step notes its sources; a boot reads the compiler
    limit: float  # seconds it may run (0: no limit)
    attempt: int  # 1, then 2... when --kbuild-retries runs it again

    @property
    def build_dir(self) -> Path:
        assert self.make.build_dir is not None
        return self.make.build_dir

    @property
    def kernel(self) -> Path:
        """The kernel image artifact in the results dir."""
        return self.output_dir / os.path.basename(self.make.arch.kernel_image_path)


@dataclass
class Made:
    """What a target's commands did, before the verdict reads the log."""

    status: Status = Status.PASS
    reason: str = ""
    rc: int = 0  # the exit status of the command that failed
    problems: list[str] = field(default_factory=list)  # tolerated failures
    failed: list[str] = field(default_factory=list)  # the command that failed the target


Runner = Callable[[Step], "Made | TargetResult"]


def configure(step: Step) -> Made:
    """The .config: the arch's fragments first, so the build's own still win."""
    make, spec = step.make, step.make.spec
    fragments = (*make.arch.kconfig_add, *spec.kconfig_add)
    plan = kcfg.plan(spec.kconfig, fragments, make.tree, spec.base_dir, step.build_dir, make.line)
    step.record.kconfig_sources = plan.sources
    ok, reason = kcfg.run_plan(plan, step.build_dir, make.run, make.line)
    return Made(Status.PASS if ok else Status.FAIL, reason)


def commands(step: Step) -> Made:
    """The target's commands in order; the first that fails (and is not
    tolerated) stops it."""
    made = Made()
    z = step.make.options.compression
    for cmd in step.target.expanded_commands(step.make.arch, str(step.build_dir), z):
        rc = step.make.run(cmd)
        if rc != 0 and step.target.tolerates(cmd):
            made.problems.append(f"{shlex.join(cmd[:2])} exited {rc}")
        elif rc != 0:
            made.status, made.reason = Status.FAIL, f"{shlex.join(cmd[:2])} failed"
            made.rc, made.failed = rc, cmd
            break
    return made


def boot(step: Step) -> TargetResult:
    """Boot the kernel under QEMU with a freshly packed initramfs (boot/qemu.py)."""
    arch = step.make.arch.name
    machine = boots.Machine.load(arch)
    if machine is None:
        why = f"boot: no QEMU machine for arch {arch} (data/boot/)"
        return TargetResult(step.target.name, Status.SKIP, reason=why)
    boots.keep_earlier_console(step.output_dir, step.attempt)
    try:
        return _boot_once(step, machine)
    except KbuildInfraError as err:  # QEMU, its firmware or the init's compiler
        step.make.line(f"E: {err}")
        return TargetResult(step.target.name, Status.ERROR, reason=str(err))


def _boot_once(step: Step, machine: boots.Machine) -> TargetResult:
    make = step.make
    assert make.log is not None
    boots.check_host(machine)
    tc = step.record.toolchain
    cache = Path(make.options.cache_dir or step.output_dir.parent / ".kbuild-cache") / "boot"
    init = initramfs.build_init(
        tree=make.tree,
        build_dir=step.build_dir,
        cache=cache / f"{make.arch.name}-{make.toolchain.name}",
        argv=initramfs.compiler_argv(
            machine.libc_compiler or str(tc["compiler"]),
            make.arch.cross_compile.rstrip("-"),
            machine.init_cflags,
        ),
        compiler_version=str(tc.get("version") or ""),
        run=make.run,
        log=make.line,
        libc=bool(machine.libc_compiler),
    )
    initrd = step.output_dir / boots.INITRAMFS
    initrd.write_bytes(initramfs.cpio(init.read_bytes()))
    release = (step.build_dir / "include/config/kernel.release").read_text().strip()
    setup = boots.BootSetup(
        machine, step.kernel, initrd, release, step.output_dir, step.limit, step.attempt
    )
    out = boots.run(setup, make.log, make.slot())
    out.facts["consoles"] = [p.name for p in boots.iter_consoles(step.output_dir)]
    result = TargetResult(step.target.name, out.status, reason=out.reason, boot=out.facts)
    result.errors = [] if out.status == Status.PASS else out.errors
    result.retryable = out.retryable
    result.infra = "qemu" if out.status == Status.ERROR else ""
    kept = [*boots.iter_consoles(step.output_dir), *out.files[1:]]
    result.artifacts = [Artifact.of(p) for p in kept if p.is_file()]
    return result


def kunit(step: Step) -> TargetResult:
    """The kernel's KUnit suites: UML directly, others under QEMU (boot/kunit.py)."""
    make = step.make
    assert make.log is not None
    setup = kunits.KunitSetup(
        name=step.target.name,
        arch=make.arch.name,
        uml=make.arch.srcarch == "um",
        kernel=step.kernel,
        release=probes.kernelrelease(step.build_dir) or "",
        output_dir=step.output_dir,
        timeout=step.limit,
    )
    try:
        return kunits.run(setup, make.log, make.slot())
    except KbuildInfraError as err:  # QEMU or its firmware missing, no machine
        make.line(f"E: {err}")
        return TargetResult(step.target.name, Status.ERROR, reason=str(err))


def before_retry(make: MakeEnv, name: str, broke: str) -> None:
    """What infra.yaml says to do before *name* runs again after *broke*:
    ``make clean`` after a full disk (objects go, .config stays)."""
    sig = infra.signature(broke)
    if sig is None or not sig.before_retry:
        return
    assert make.build_dir is not None
    before = workdirs.used_bytes(make.build_dir)
    rc = make.run(["make", sig.before_retry])
    freed = before - workdirs.used_bytes(make.build_dir)
    done = "done" if rc == 0 else f"exit status {rc}"
    make.line(
        f"I: {name}: make {sig.before_retry} in the build dir before the next try ({done}): "
        f"freed {workdirs.size(max(freed, 0))}; "
        f"{workdirs.free_space({'build dir': make.build_dir})}"
    )


# kind -> runner: every kind a target file may name (asserted by a test).
RUNNERS: dict[str, Runner] = {
    "config": configure,
    "commands": commands,
    "kselftest": commands,  # its own judge reads the selftests' output
    "boot": boot,
    "kunit": kunit,
}
