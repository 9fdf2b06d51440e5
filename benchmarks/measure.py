"""What the benchmarks measure the same way: CPU seconds of child
processes, wall+CPU of a call, and the most jobs that ran at once."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from pathlib import Path


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(run: Callable[[], None]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the processes it ran)."""
    cpu, start = children_cpu(), time.perf_counter()
    run()
    return time.perf_counter() - start, children_cpu() - cpu


def max_running(log: Path) -> int:
    """The most jobs that ran at once, from "S <time>" / "E <time>" lines
    (fakelinux's FAKELINUX_JOBLOG format)."""
    events = sorted(
        (float(t), 0 if kind == "E" else 1)
        for kind, t in (line.split() for line in log.read_text().splitlines())
    )
    running = peak = 0
    for _, starts in events:
        running += 1 if starts else -1
        peak = max(peak, running)
    return peak
