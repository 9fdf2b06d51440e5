"""One CPU budget for every build of a run: a GNU make jobserver in a named FIFO.

The controller (the pytest process that is not an xdist worker) makes a FIFO
in a private temporary directory and fills it with one token per slot; the
workers get its path. Each command of a build first takes one token for
itself (the job that make runs without asking, its "implicit" slot), and
each make is a jobserver client that takes one more token per extra job.
So at most ``slots`` jobs run on the machine, whatever the number of
builds, and a build running alone may use every slot.

make is told through a ``sh`` wrapper that opens the FIFO as fd 3 where make
runs (a container gets the FIFO by a bind mount; inherited fds would not
reach it) and adds ``--jobserver-auth=3,3`` to MAKEFLAGS (GNU make 4.3:
one read-write fd serves as both ends, and that word alone makes make a
client). No ``-j`` goes with it: a ``-jN`` on make's command line makes make
ignore the jobserver, and a bare ``-j`` in MAKEFLAGS means unlimited jobs to
every sub-make that keeps it, as the kernel's ``tools/`` sub-makes do
(``MAKEFLAGS="$(filter --j% -j,$(MAKEFLAGS))"``: objtool, perf, cpupower,
the selftests), which then run outside the budget.
"""

from __future__ import annotations

import array
import fcntl
import os
import stat
import termios
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import parsers
from ..errors import KbuildInfraError
from ..parsers import MAX_SLOTS
from . import tempdirs

TOKEN = b"+"
FD = 3
MAKEFLAGS_WORDS = f"--jobserver-auth={FD},{FD}"
# $1 is the FIFO, the rest is the make command. exec keeps make's pid, so a
# runtime that stops the process group stops make as before.
WRAPPER_SCRIPT = (
    f'exec {FD}<>"$1" || exit 125; shift; '
    f'MAKEFLAGS="${{MAKEFLAGS:+$MAKEFLAGS }}{MAKEFLAGS_WORDS}"; export MAKEFLAGS; exec "$@"'
)
WORKERINPUT_KEY = "kbuild_jobserver"
parse_mode = parsers.jobserver_mode


def slots_for(mode: str | int, *, workers: int, cpus: int, jobs_given: bool) -> int | None:
    """How many slots the run's jobserver has, or None for no jobserver.

    ``auto`` turns it on only for several local xdist workers (*workers* > 1)
    and no explicit ``--kbuild-jobs``: a single build at a time already gets
    every CPU from ``make -j<CPUs>``, and an explicit ``-j`` is the user's.
    ``on`` means one slot per CPU: every job, the implicit ones included,
    holds a slot, so that is the machine, neither more nor less.
    """
    if mode == "off" or (mode == "auto" and (workers <= 1 or jobs_given)):
        return None
    if isinstance(mode, int):
        return mode
    return max(1, cpus)


@dataclass(frozen=True)
class JobserverInfo:
    """What a build needs to know about the run's jobserver (and metadata.json)."""

    path: Path
    slots: int
    mode: str

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "slots": self.slots, "fifo": str(self.path)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobserverInfo:
        return cls(Path(data["fifo"]), int(data["slots"]), str(data["mode"]))


class Jobserver:
    """The controller's FIFO: made and filled at start, removed by close().

    The controller keeps the FIFO open for the whole run: a FIFO forgets its
    tokens when the last process that has it open closes it.
    """

    def __init__(self, slots: int, mode: str = "on") -> None:
        if not 1 <= slots <= MAX_SLOTS:
            raise ValueError(f"slots must be 1..{MAX_SLOTS}, not {slots}")
        # Owned (tempdirs.py): a controller killed with SIGKILL leaves it to the next run.
        self._dir = tempdirs.make("jobserver", "kbuild-jobserver-")
        path = self._dir / "fifo"
        os.mkfifo(path, 0o600)
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        os.write(self._fd, TOKEN * slots)
        self.info = JobserverInfo(path, slots, mode)

    @property
    def path(self) -> Path:
        return self.info.path

    def available(self) -> int:
        """Tokens in the FIFO now (slots minus the jobs holding one)."""
        if self._fd is None:
            return 0
        return available(self._fd)

    def close(self) -> None:
        """Remove the FIFO and its directory; idempotent."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        tempdirs.remove(self._dir)


def available(fd: int) -> int:
    """Bytes waiting in the pipe or FIFO *fd*, without reading them."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return int(count[0])


def wrap(argv: Sequence[str], fifo: Path) -> list[str]:
    """*argv* (a make command) run as a client of the jobserver at *fifo*."""
    return ["sh", "-c", WRAPPER_SCRIPT, "sh", str(fifo), *argv]


@contextmanager
def slot(fifo: Path) -> Iterator[None]:
    """Hold one token of the jobserver at *fifo* (blocking until one is free).

    The token stands for the command's own job, which make runs without a
    token; it goes back when the block ends, also on error or Ctrl-C.
    """
    try:
        if not stat.S_ISFIFO(fifo.stat().st_mode):
            raise OSError(f"{fifo} is not a FIFO")
        fd = os.open(fifo, os.O_RDWR | os.O_CLOEXEC)
    except OSError as err:
        raise KbuildInfraError(
            f"jobserver FIFO {str(fifo)!r} cannot be opened ({err}); it is made by the "
            "pytest controller and is only reachable on its machine"
        ) from None
    try:
        token = os.read(fd, 1)
        try:
            yield
        finally:
            os.write(fd, token)
    finally:
        os.close(fd)
