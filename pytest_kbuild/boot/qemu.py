"""The boot target: run a built kernel under QEMU with pytest-kbuild's
initramfs and judge its serial console (console.py).

Each arch's machine is data (data/boot/<arch>.yaml: QEMU binary and Debian
package, machine, CPU and memory, console device, firmware, the kconfig
fragment that makes tinyconfig boot). QEMU runs on the host, holding one
jobserver slot, with the kernel and initramfs from the results directory,
so the command in metadata.json boots the same artifacts again."""

from __future__ import annotations

import gzip
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .. import definitions
from ..errors import DefinitionError, KbuildInfraError, ToolNotFound, UnknownDefinition
from ..results import Status
from . import console as bootconsole

AFTER_DONE = 5.0  # seconds QEMU gets to exit by itself after init's last line
AFTER_PANIC = 2.0  # seconds of console kept after a panic line (the call trace)
CONSOLE = "boot.log"
INITRAMFS = "initramfs.cpio"


@dataclass(frozen=True)
class Machine:
    """How one arch's kernel boots under QEMU (data/boot/<arch>.yaml)."""

    arch: str
    qemu: str
    package: str
    machine: str
    args: tuple[str, ...]
    console: str
    fragments: tuple[Path, ...]
    firmware: str = ""
    firmware_package: str = ""
    uncompressed: bool = False
    init_cflags: tuple[str, ...] = ()
    append: tuple[str, ...] = ()
    # Where the tree's nolibc lacks the arch (6.1: s390, powerpc), init links
    # statically against a cross C library: this compiler and its packages.
    libc_compiler: str = ""
    libc_packages: tuple[str, ...] = ()

    @property
    def packages(self) -> list[str]:
        """The Debian packages this machine's boots need on the host."""
        return [p for p in (self.package, self.firmware_package, *self.libc_packages) if p]

    @classmethod
    def load(cls, arch: str) -> Machine | None:
        """The machine for *arch*, or None when pytest-kbuild cannot boot it."""
        try:
            d = definitions.load("boot", arch)
        except UnknownDefinition:
            return None
        r, o = definitions.require, definitions.optional
        firmware = o(d, "firmware", dict, {})
        if firmware and not (
            isinstance(firmware.get("path"), str) and isinstance(firmware.get("package"), str)
        ):
            raise DefinitionError(str(d.path), "'firmware' must be {path: FILE, package: DEBIAN}")
        libc: Any = d.fields.get("libc_init", {})
        if libc != {} and not (
            isinstance(libc, dict)
            and isinstance(libc.get("compiler"), str)
            and isinstance(libc.get("packages"), list)
            and all(isinstance(p, str) for p in libc["packages"])
        ):
            raise DefinitionError(
                str(d.path), "'libc_init' must be {compiler: CC, packages: [DEBIAN, ...]}"
            )
        return cls(
            arch=d.name,
            qemu=r(d, "qemu", str),
            package=r(d, "package", str),
            machine=r(d, "machine", str),
            args=tuple(str(a) for a in o(d, "args", list, [])),
            console=r(d, "console", str),
            fragments=tuple(d.path.parent / str(f) for f in r(d, "fragments", list)),
            firmware=firmware.get("path", ""),
            firmware_package=firmware.get("package", ""),
            uncompressed=o(d, "uncompressed", bool, False),
            init_cflags=tuple(str(a) for a in o(d, "init_cflags", list, [])),
            append=tuple(str(a) for a in o(d, "append", list, [])),
            libc_compiler=libc.get("compiler", ""),
            libc_packages=tuple(libc.get("packages", ())),
        )

    def command(
        self, qemu: str, kernel: Path, initrd: Path | None, append: Sequence[str] = ()
    ) -> list[str]:
        """The QEMU command that boots *kernel* with *initrd* (None: without
        one) on the serial console, *append* added to the kernel's command line.

        Always TCG: where /dev/kvm opens but nested virtualization is partial
        (this project's machines), QEMU 7.2 aborts setting MSRs under KVM or
        hangs, and a tinyconfig kernel boots in seconds under TCG anyway."""
        line = [f"console={self.console}", "panic=-1", *self.append, *append]
        argv = [qemu, "-M", self.machine, *self.args, "-accel", "tcg"]
        if self.firmware:
            argv += ["-bios", self.firmware]
        argv += ["-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot"]
        argv += ["-kernel", str(kernel)]
        argv += ["-initrd", str(initrd)] if initrd is not None else []
        argv += ["-append", " ".join(line)]
        return argv


def check_host(machine: Machine) -> str:
    """The QEMU binary's path; ERROR (infrastructure) when QEMU, the init's
    C library compiler or the machine's firmware is missing."""
    qemu = shutil.which(machine.qemu)
    if qemu is None:
        raise ToolNotFound(
            machine.qemu, f"boot {machine.arch}", f"install Debian's {machine.package}"
        )
    if machine.libc_compiler and shutil.which(machine.libc_compiler) is None:
        raise ToolNotFound(
            machine.libc_compiler,
            f"the boot init for {machine.arch}",
            f"install Debian's {' '.join(machine.libc_packages)}",
        )
    if machine.firmware and not Path(machine.firmware).is_file():
        raise KbuildInfraError(
            f"boot {machine.arch}: firmware {machine.firmware!r} is missing; install "
            f"Debian's {machine.firmware_package}"
        )
    return qemu


def qemu_version(qemu: str) -> str:
    """QEMU's first --version line ('' when it does not answer)."""
    try:
        out = subprocess.run(
            [qemu, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.splitlines()[0].strip() if out.strip() else ""


def boot_kernel(kernel: Path, machine: Machine, folder: Path) -> Path:
    """The image QEMU loads: the kernel artifact, gunzipped next to it when
    the machine's loader cannot unpack it."""
    if not machine.uncompressed or kernel.suffix != ".gz":
        return kernel
    out = folder / kernel.with_suffix("").name
    with gzip.open(kernel, "rb") as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


@dataclass
class QemuRun:
    """What one QEMU run left: its console text, how it ended, how long it took."""

    text: str
    timed_out: bool
    exit_status: int
    seconds: float


def _stop(proc: subprocess.Popen[bytes]) -> int:
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


def run_qemu(
    argv: Sequence[str], sinks: Sequence[BinaryIO], timeout: float, release: str
) -> QemuRun:
    """Run QEMU, copying its console to every sink, until init has said its
    last line (then QEMU gets AFTER_DONE s to exit), the kernel panicked
    (AFTER_PANIC s more for the trace), QEMU exited, or *timeout* passed."""
    started = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    buf = bytearray()
    deadline = started + timeout
    stop_at: float | None = None
    timed_out = False
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        while True:
            now = time.monotonic()
            limit = min(deadline, stop_at) if stop_at else deadline
            if now >= limit:
                timed_out = stop_at is None
                status = _stop(proc)
                break
            if not sel.select(timeout=limit - now):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                status = proc.wait()
                break
            buf += chunk
            for sink in sinks:
                sink.write(chunk)
                sink.flush()
            if stop_at is None:
                text = buf.decode(errors="replace")
                if bootconsole.DONE in text and bootconsole.booted(text, release):
                    stop_at = time.monotonic() + AFTER_DONE
                elif bootconsole.finished(text):
                    stop_at = time.monotonic() + AFTER_PANIC
    except BaseException:
        _stop(proc)
        raise
    finally:
        sel.close()
        proc.stdout.close()
    return QemuRun(buf.decode(errors="replace"), timed_out, status, time.monotonic() - started)


@dataclass
class BootOutcome:
    """A boot's verdict, the files it kept and its facts for metadata.json."""

    status: Status
    reason: str
    retryable: bool = False
    errors: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BootSetup:
    """Everything one boot needs, decided by the build."""

    machine: Machine
    kernel: Path  # the kernel artifact in the results dir
    initrd: Path  # the initramfs in the results dir
    release: str  # include/config/kernel.release of the build
    output_dir: Path
    timeout: float
    attempt: int  # 1 for the first try; earlier consoles are kept as boot-tryN.log


def keep_earlier_console(output_dir: Path, attempt: int) -> Path | None:
    """Before try *attempt* (> 1): the previous try's boot.log, renamed."""
    console = output_dir / CONSOLE
    if attempt <= 1 or not console.is_file():
        return None
    kept = output_dir / f"boot-try{attempt - 1}.log"
    console.replace(kept)
    return kept


def run(
    setup: BootSetup,
    build_log: BinaryIO,
    slot: Callable[[], AbstractContextManager[None]] = nullcontext,
) -> BootOutcome:
    """Boot *setup* once: QEMU under one jobserver slot, console to boot.log
    and build.log, then the verdict. Raises KbuildInfraError (QEMU or
    firmware missing)."""
    m = setup.machine
    qemu = check_host(m)
    kernel = boot_kernel(setup.kernel, m, setup.output_dir)
    argv = m.command(qemu, kernel, setup.initrd)
    facts: dict[str, Any] = {
        "qemu": qemu_version(qemu),
        "machine": m.machine,
        "firmware": m.firmware or None,
        "accel": "tcg",
        "command": shlex.join(argv),
        "release": setup.release,
        "timeout": setup.timeout,
        "attempt": setup.attempt,
        "console": CONSOLE,
    }
    build_log.write(f"$ {facts['command']}\n".encode())
    build_log.flush()
    with (setup.output_dir / CONSOLE).open("wb") as console, slot():
        result = run_qemu(argv, [console, build_log], setup.timeout, setup.release)
    build_log.write(b"\n")
    verdict = bootconsole.judge(
        result.text,
        setup.release,
        timed_out=result.timed_out,
        seconds=round(result.seconds, 1),
        exit_status=result.exit_status,
    )
    facts["seconds"] = round(result.seconds, 3)
    facts["exit_status"] = result.exit_status
    lines = bootconsole.lines(result.text)
    facts["excerpt"] = [
        line for line in lines if bootconsole.MARKER in line or "Linux version" in line
    ][:3]
    errors = [verdict.reason]
    if not verdict.passed:
        errors += [f"console tail ({CONSOLE}):", *bootconsole.tail(result.text)]
        errors.append(f"boot again: {facts['command']}")
    files = [setup.output_dir / CONSOLE, setup.initrd]
    if kernel != setup.kernel:
        files.append(kernel)
    return BootOutcome(verdict.status, verdict.reason, verdict.retryable, errors, files, facts)


def iter_consoles(output_dir: Path) -> Iterator[Path]:
    """Every console a build's boot tries left, oldest first."""
    yield from sorted(output_dir.glob("boot-try*.log"), key=lambda p: int(p.stem[8:]))
    if (output_dir / CONSOLE).is_file():
        yield output_dir / CONSOLE
