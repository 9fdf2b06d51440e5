"""What the benchmarks measure the same way: CPU seconds of child
processes, wall+CPU of a call, the CPU time the hypervisor stole, and the
most jobs that ran at once."""

from __future__ import annotations

import os
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


def stolen(stat: Path = Path("/proc/stat")) -> float:
    """Seconds of CPU time the hypervisor gave to others so far, summed
    over all CPUs (the "steal" column of /proc/stat); 0 where there is none."""
    try:
        fields = stat.read_text().splitlines()[0].split()
    except OSError:
        return 0.0
    ticks = int(fields[8]) if len(fields) > 8 and fields[0] == "cpu" else 0
    return ticks / os.sysconf("SC_CLK_TCK")


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
