"""Progress of running builds: what each process is building, and what make
is doing right now, as small JSON files a printing process reads.

xdist workers cannot write to the terminal, so every process that runs
build items publishes its current item to ``<results>/.progress/<who>.json``
every few seconds; the controller (or the only process) reads them all and
prints one line per running build. What make is doing is read from /proc:
the newest compiler, assembler or linker among the publishing process's
descendants (``CC kernel/fork.o``, ``LD vmlinux``). A build in a container
runs outside that process tree: then the last line of its build.log is
shown. No pytest import.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..results import COMMAND_ECHO, write_json

DIRNAME = ".progress"
MAX_DOING = 70  # characters of what make is doing
PROBING = "checking the toolchain"  # Kbuild's cc-option/ld-option probes
STARTING = "starting the next command"
WAITING = "waiting for a jobserver slot"  # the other builds hold every slot

_COMPILERS = ("gcc", "cc", "clang", "g++", "c++")
_LINKERS = ("ld", "ld.bfd", "ld.lld", "ld.gold")
_QUIET = {"make", "sh", "bash", "dash", "ccache", "sccache", "xargs", "env", "timeout"}


@dataclass(frozen=True)
class Running:
    """One process's current build item."""

    build_id: str
    target: str
    started: float  # time.time() when the item started
    doing: str = ""  # e.g. "CC kernel/fork.o"; "" when unknown
    worker: str = ""  # xdist worker id, "" without -n
    queued: float = 0.0  # seconds of it spent waiting for jobserver slots

    def line(self, now: float) -> str:
        """``x86_64-gcc-defconfig kernel 2m05s: CC kernel/fork.o``, and with
        waits for jobserver slots ``config 3m33s (3m20s waiting): ...``"""
        who = f"[{self.worker}] " if self.worker else ""
        doing = f": {self.doing}" if self.doing else ""
        took = elapsed(now - self.started)
        if self.queued >= 1:
            took += f" ({elapsed(self.queued)} waiting)"
        return f"{who}{self.build_id} {self.target} {took}{doing}"


def elapsed(seconds: float) -> str:
    """``42s``, ``3m07s``, ``1h02m``."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def publish(directory: Path, who: str, running: Running | None) -> None:
    """Write (or, with *running* None, remove) the file of process *who*."""
    path = Path(directory) / f"{who}.json"
    if running is None:
        path.unlink(missing_ok=True)
        return
    write_json(path, asdict(running))


def read(directory: Path, max_age: float, now: float | None = None) -> list[Running]:
    """Every published item not older than *max_age* seconds (a process that
    died leaves a stale file behind), sorted by build id."""
    now = time.time() if now is None else now
    found: list[Running] = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            if now - path.stat().st_mtime > max_age:
                continue
            found.append(Running(**json.loads(path.read_text())))
        except (OSError, ValueError, TypeError):
            continue  # being replaced, or not ours: next time
    return sorted(found, key=lambda r: (r.build_id, r.target))


# -- what make is doing ---------------------------------------------------------
@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    start: int  # clock ticks after boot
    argv: tuple[str, ...]
    pgid: int = 0  # its process group
    zombie: bool = False  # ended, its status not yet collected by its parent


def processes(proc: Path = Path("/proc")) -> list[Process]:
    """Every process of /proc that can be read (others come and go)."""
    out: list[Process] = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        fields = stat[stat.rindex(")") + 2 :].split()
        words = tuple(a.decode(errors="replace") for a in argv if a)
        pid, ppid, start, pgid = int(entry.name), int(fields[1]), int(fields[19]), int(fields[2])
        out.append(Process(pid, ppid, start, words, pgid, fields[0] == "Z"))
    return out


def descendants(root: int, procs: Iterable[Process]) -> list[Process]:
    """The processes below *root*, newest first."""
    children: dict[int, list[Process]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p)
    found: list[Process] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child.pid)
    return sorted(found, key=lambda p: -p.start)


def _tool(argv0: str) -> str:
    """``gcc`` for ``aarch64-linux-gnu-gcc``, ``clang`` for ``clang-16``."""
    name = os.path.basename(argv0)
    if name.startswith("clang"):
        return "clang"
    return name.rsplit("-", 1)[-1] if "-" in name else name


def _is_compiler(tool: str) -> bool:
    return tool in _COMPILERS or tool.startswith("gcc")


def describe(argv: Sequence[str], within: Sequence[str] = ()) -> str:
    """What one command does, as Kbuild's quiet output would say it; paths
    under one of the directories *within* (build dir, tree) relative to it."""
    if not argv:
        return ""
    name, tool, out = os.path.basename(argv[0]), _tool(argv[0]), _output(argv)
    if out == os.devnull and (_is_compiler(tool) or tool in _LINKERS or tool == "as"):
        return PROBING  # an object nobody keeps: Kbuild asking what the tools accept
    for d in within:
        if out.startswith(d.rstrip("/") + "/"):
            out = out[len(d.rstrip("/")) + 1 :]
            break
    if _is_compiler(tool):
        if "-c" in argv and out:
            return f"CC {out}"
        if "-E" in argv or "-S" in argv:
            return f"CPP {out}" if out else "CPP"
        return f"LD {out}" if out else name
    if tool in _LINKERS and out:
        return f"LD {out}"
    if tool == "as" and out:
        return f"AS {out}"
    if tool == "ar" and len(argv) > 2:
        return f"AR {argv[2]}"
    text = " ".join(" ".join([name, *argv[1:]]).split())  # an awk script is one line
    return text if len(text) <= MAX_DOING else text[: MAX_DOING - 3] + "..."


def _output(argv: Sequence[str]) -> str:
    for i, arg in enumerate(argv[:-1]):
        if arg == "-o":
            return argv[i + 1]
    return next((a[2:] for a in argv if a.startswith("-o") and len(a) > 2), "")


def doing(root: int, procs: Iterable[Process] | None = None, within: Sequence[str] = ()) -> str:
    """What the newest working process below *root* does, or ""."""
    every = list(processes() if procs is None else procs)
    by_pid = {p.pid: p for p in every}
    below = descendants(root, every)
    probing, other = False, ""
    for p in below:
        if not p.argv or os.path.basename(p.argv[0]) in _QUIET:
            continue
        parent = by_pid.get(p.ppid)
        if parent is not None and parent.argv and _is_compiler(_tool(parent.argv[0])):
            continue  # cc1, as, collect2 of a compiler driver: the driver names the object
        said = describe(p.argv, within)
        if said == PROBING:
            probing = True
        elif _is_compiler(_tool(p.argv[0])) or _tool(p.argv[0]) in (*_LINKERS, "as", "ar"):
            return said  # an object being built beats a script or a probe beside it
        else:
            other = other or said  # a generator script (awk, perl, sed): the newest
    return other or (PROBING if probing else "make" if below else "")


def last_line(log: Path, size: int = 4096) -> str:
    """The last non-empty line of *log* (its last *size* bytes), cut short."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - size))
            tail = f.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
    if not lines:
        return ""
    text = lines[-1]
    if text.startswith(COMMAND_ECHO):
        # build.log's line for a command that has not started yet (no process
        # below the build: it is being spawned; a wait for a jobserver slot
        # is said by the publisher, which knows it: WAITING)
        return STARTING
    return text if len(text) <= MAX_DOING else text[: MAX_DOING - 3] + "..."


def lines(running: Sequence[Running], now: float | None = None) -> list[str]:
    now = time.time() if now is None else now
    return [r.line(now) for r in running]
