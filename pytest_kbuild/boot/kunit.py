"""The kunit target: run the built kernel's KUnit suites and report every
case (ktap.py reads the console).

A kernel configured with KUnit (data/kunit/*.config) runs its built-in
suites at boot and stops itself (``kunit_shutdown``). User-mode Linux is
the ``linux`` program the kernel target kept, run directly; any other arch
boots under QEMU on the machine the boot target uses (data/boot/<arch>.yaml,
qemu.py), without an initramfs. The console is kept as kunit.log, the
command and QEMU's facts go into the result's ``boot`` facts, as the boot
target's do, and every case into ``cases``."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import KbuildInfraError
from ..results import Artifact, Status, TargetResult
from . import console as bootconsole
from . import ktap
from . import qemu as boots

CONSOLE = "kunit.log"
# UML: console on stdin/stdout; halt when the suites are done.
UML_ARGS = ("mem=256M", "con=fd:0,fd:1", "kunit.enable=1", "kunit_shutdown=halt")
# QEMU: reboot when done, which -no-reboot turns into QEMU's exit.
QEMU_APPEND = ("kunit.enable=1", "kunit_shutdown=reboot")


@dataclass(frozen=True)
class KunitSetup:
    """Everything one KUnit run needs, decided by the build."""

    name: str  # the target's name
    arch: str  # the arch's name (data/boot/<arch>.yaml for QEMU)
    uml: bool  # User-mode Linux: run the kernel itself
    kernel: Path  # the kernel artifact in the results dir
    release: str  # include/config/kernel.release of the build
    output_dir: Path
    timeout: float


def command(setup: KunitSetup) -> tuple[list[str], dict[str, Any], list[Path]]:
    """The command that runs the suites, its facts and the files it made.

    Raises KbuildInfraError when QEMU or its firmware is missing, or the
    arch has no QEMU machine."""
    if setup.uml:
        argv = [str(setup.kernel), *UML_ARGS]
        return argv, {"qemu": None, "machine": "uml", "accel": None}, []
    machine = boots.Machine.load(setup.arch)
    if machine is None:
        raise KbuildInfraError(
            f"{setup.name}: no QEMU machine for arch {setup.arch} (data/boot/); "
            "run KUnit on um or an arch with a machine"
        )
    qemu = boots.check_host(machine)
    kernel = boots.boot_kernel(setup.kernel, machine, setup.output_dir)
    argv = machine.command(qemu, kernel, None, QEMU_APPEND)
    facts = {
        "qemu": boots.qemu_version(qemu),
        "machine": machine.machine,
        "firmware": machine.firmware or None,
        "accel": "tcg",
    }
    return argv, facts, [kernel] if kernel != setup.kernel else []


def run(
    setup: KunitSetup,
    build_log: BinaryIO,
    slot: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> TargetResult:
    """Run the suites once under one jobserver slot, console to kunit.log
    and build.log, and judge the KTAP. Raises KbuildInfraError (QEMU or
    firmware missing)."""
    argv, facts, made = command(setup)
    facts.update(
        command=shlex.join(argv),
        release=setup.release,
        timeout=setup.timeout,
        console=CONSOLE,
    )
    build_log.write(f"$ {facts['command']}\n".encode())
    build_log.flush()
    try:
        with (setup.output_dir / CONSOLE).open("wb") as console, slot():
            ran = boots.run_qemu(argv, [console, build_log], setup.timeout, setup.release)
    except OSError as err:  # the kernel would not start (UML: not executable, ...)
        raise KbuildInfraError(f"{setup.name}: cannot run {argv[0]}: {err}") from err
    build_log.write(b"\n")
    facts["seconds"] = round(ran.seconds, 3)
    facts["exit_status"] = ran.exit_status
    facts["timed_out"] = ran.timed_out
    report = ktap.parse(ran.text)
    facts["ktap"] = report.counts()
    status, reason = report.verdict()
    if ran.timed_out:
        reason += f" (stopped after the {setup.timeout:g} s timeout)"
    result = TargetResult(setup.name, status, ran.seconds, reason, boot=facts)
    result.cases = [c.to_json() for c in report.cases]
    if status == Status.FAIL:
        bad = [c for c in report.cases if c.status in (Status.FAIL, Status.ERROR)]
        result.errors = [f"{c.suite}.{c.name}: {c.reason}" for c in bad]
    elif status == Status.ERROR:
        result.retryable = ran.timed_out  # a slow TCG machine may finish next time
        result.errors = [reason, f"console tail ({CONSOLE}):", *bootconsole.tail(ran.text)]
    if status != Status.PASS:
        result.errors.append(f"run again: {facts['command']}")
    kept = [setup.output_dir / CONSOLE, *made]
    result.artifacts = [Artifact.of(p) for p in kept if p.is_file()]
    return result
