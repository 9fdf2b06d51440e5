"""Judge a boot from its serial console text: did the kernel we built start
and run our init, or did it panic, hang, or never reach init?

Pure functions on text, so recorded consoles test every verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..results import Status

# What pytest-kbuild's init (data/boot/init.c) prints; passed to it with -D.
MARKER = "pytest-kbuild-boot: init ran"
# init's last line before it asks for a restart: the host may stop QEMU.
DONE = "pytest-kbuild-boot: powering off"
TAIL_LINES = 40

_VERSION = re.compile(r"Linux version (\S+)")

# How a kernel says on its console that it crashed: the start of the line
# each kind of crash prints. The one table of it: a boot's verdict (judge)
# and a KUnit run that stopped in a suite (ktap.py) read the same.
PANIC = "Kernel panic - not syncing:"
CRASHES = (
    re.escape(PANIC),
    "Unable to handle kernel ",
    "BUG: ",
    "Oops: ",
    "general protection fault",
    "Segfault with no mm",  # User-mode Linux
    "kernel BUG at ",
)
# Group 1: the crash's line from where it starts.
CRASH = re.compile(f"((?:{'|'.join(CRASHES)}).*)")
_PANIC = re.compile(f"{re.escape(PANIC)} ?(.*)")
_OOPS = re.compile(f"((?:{'|'.join(c for c in CRASHES if c != re.escape(PANIC))}).*)")
_RUN_INIT = re.compile(r"Run (\S+) as init process")
_QEMU_SAYS = re.compile(r"qemu-system-\S+: ")
_NO_INITRD = re.compile(r"(Initramfs unpacking failed: .*|junk within compressed archive.*)")


@dataclass(frozen=True)
class Verdict:
    """A boot's outcome: status, the one-line reason, and whether a retry
    may help (a hang under TCG may just be a slow machine)."""

    status: Status
    reason: str
    retryable: bool = False

    @property
    def passed(self) -> bool:
        return self.status == Status.PASS


def lines(text: str) -> list[str]:
    """Console lines without carriage returns or trailing blanks."""
    return [line.replace("\r", "").rstrip() for line in text.splitlines()]


def booted(text: str, release: str) -> bool:
    """The kernel we built started (its ``Linux version`` line) and our init ran."""
    return MARKER in text and any(v == release for v in _VERSION.findall(text))


def finished(text: str) -> bool:
    """init said its last line, or the kernel panicked: nothing more will come."""
    return DONE in text or _PANIC.search(text) is not None


def judge(text: str, release: str, *, timed_out: bool, seconds: float, exit_status: int) -> Verdict:
    """The verdict on console *text* of a kernel built as *release*.

    *timed_out* says the host stopped QEMU after *seconds* without a result;
    otherwise QEMU ended by itself with *exit_status*.
    """
    if booted(text, release):
        return Verdict(Status.PASS, f"booted Linux {release}; init ran")
    panic = _PANIC.search(text)
    if panic:
        return Verdict(Status.FAIL, f"kernel panic: {panic.group(1).strip() or 'no message'}")
    versions = _VERSION.findall(text)
    if versions and release not in versions:
        return Verdict(
            Status.FAIL,
            f"the console shows Linux version {versions[0]}, not the built {release}",
        )
    if not versions and not timed_out and exit_status != 0:
        # QEMU itself failed (a bad option, a crash): the machine, not the kernel.
        said = [line for line in lines(text) if _QEMU_SAYS.match(line)]
        why = f": {said[-1]}" if said else ""
        return Verdict(Status.ERROR, f"QEMU failed with exit status {exit_status}{why}")
    oops = _OOPS.search(text)
    no_initrd = _NO_INITRD.search(text)
    run_init = _RUN_INIT.search(text)
    if not text.strip():
        what = "no console output (the kernel never started, or its console is not configured)"
    elif not versions:
        what = "no 'Linux version' line on the console (is printk on and the console right?)"
    elif oops:
        what = f"kernel oops: {oops.group(1).strip()}"
    elif no_initrd:
        what = f"the initramfs was not unpacked: {no_initrd.group(1).strip()}"
    elif run_init and MARKER not in text:
        what = f"the kernel ran {run_init.group(1)} but init printed nothing"
    else:
        what = "init never ran"
    if timed_out:
        return Verdict(Status.FAIL, f"hang: {what} within {seconds:g} s", retryable=True)
    return Verdict(Status.FAIL, f"QEMU exited with status {exit_status}: {what}")


def tail(text: str, count: int = TAIL_LINES) -> list[str]:
    """The last *count* non-empty console lines."""
    return [line for line in lines(text) if line][-count:]
