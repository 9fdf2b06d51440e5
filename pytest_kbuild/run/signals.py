"""SIGTERM as an interruption: CI systems stop a job with SIGTERM (then
SIGKILL after a grace period), and Python's default dies on the spot,
leaving metadata.json "running", no JUnit XML and make still running in its
own session. `install` makes SIGTERM raise `Terminated`, a
KeyboardInterrupt, so that everything Ctrl-C does happens: make's process
group and containers are stopped, the running target is INTERRUPTED, pytest
writes its JUnit XML and results. Later SIGTERMs are ignored while that
cleanup runs (SIGKILL still ends it). No pytest import.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

EXIT_TERMINATED = 128 + signal.SIGTERM  # what a shell reports for a SIGTERM death


class Terminated(KeyboardInterrupt):
    """Raised by SIGTERM where the main thread is; str() is the reason."""

    def __init__(self) -> None:
        super().__init__("terminated by SIGTERM")


class _State:
    # Raise only while builds may run (the caller says when, see `raising`):
    # raised in a hook that ends the run (pytest's sessionfinish, where
    # xdist stops its workers) it would be a traceback and lose the JUnit
    # XML. Outside that window a SIGTERM is noted and the run ends as it
    # would, reporting it (`received`).
    raising = True
    received = False
    forward = False  # pass SIGTERM on to the child processes (xdist workers)


def _raise(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the cleanup finish
    _State.received = True
    if _State.forward:
        for pid in children():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
    if _State.raising:
        raise Terminated()


def forward_to_children(on: bool = True) -> None:
    """Pass a SIGTERM on to this process's children: an xdist controller's
    workers, which otherwise hear of it only when xdist stops them (SIGINT
    after 5 s, SIGKILL after 10 s), while their make runs on."""
    _State.forward = on


def children() -> list[int]:
    """The direct children of this process (Linux /proc)."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        if int(stat.rsplit(b")", 1)[1].split()[1]) == me:
            out.append(int(entry))
    return out


def raising(on: bool) -> None:
    """Whether a SIGTERM raises now (True) or is only noted (False)."""
    _State.raising = on


def received() -> bool:
    """Whether a SIGTERM came since `install`."""
    return _State.received


def install() -> bool:
    """Make SIGTERM raise `Terminated`; False (nothing done) off the main
    thread or when SIGTERM already has someone else's handler or is ignored."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False
    _State.raising, _State.received, _State.forward = True, False, False
    signal.signal(signal.SIGTERM, _raise)
    return True


def uninstall() -> None:
    """Give SIGTERM its default back, if `install` (or its cleanup) set it."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(
        signal.SIGTERM
    ) in (_raise, signal.SIG_IGN):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def restore_sigint() -> bool:
    """Let SIGINT raise KeyboardInterrupt again where it was ignored (a
    process started in the background of a script inherits that): an xdist
    worker is stopped by its controller with SIGINT (execnet), and ignoring
    it left make running until the worker was killed. Whether it changed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return False
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return True


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """`install` for the block, then the default again."""
    installed = install()
    try:
        yield
    finally:
        if installed:
            uninstall()
