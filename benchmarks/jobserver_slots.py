#!/usr/bin/env python3
"""How many jobserver tokens for C cores and W concurrent builds? Measured.

W "builds" (one make each, of different lengths: CPU-bound jobs that log
their start and end) run at once under each way of sharing C cores; printed
are wall time / ideal (CPU seconds / cores) and the most jobs that ran at
once. Make runs its first job without a token, so a pool of C tokens alone
lets C + W jobs run; pytest-kbuild's way takes a token for that first job
too. Takes a few seconds; no kernel involved.

    python benchmarks/jobserver_slots.py [--runs 3] [--jobs 24 6] [--work 3000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_kbuild.run import jobserver  # noqa: E402

if __package__:  # imported as benchmarks.<name> (the tests)
    from .measure import children_cpu, max_running
else:  # run as python benchmarks/<name>.py
    from measure import children_cpu, max_running

MAKEFILE = """\
JOBS := $(addprefix job,$(shell seq 1 $(N)))
all: $(JOBS)
$(JOBS):
\t@echo "S $$(date +%s.%N)" >> $(LOG); \\
\tawk 'BEGIN { for (i = 0; i < $(WORK); i++) x += i }'; \\
\techo "E $$(date +%s.%N)" >> $(LOG)
.PHONY: all $(JOBS)
"""


def policies(cores: int, builds: int) -> dict[str, tuple[int | None, bool]]:
    """name -> (jobserver tokens, or -N for make -jN per build; first job holds a token)."""
    return {
        "make -j1 each": (-1, False),
        f"make -j{cores} each": (-cores, False),
        f"{max(0, cores - builds)} tokens (C-W), first job free": (max(0, cores - builds), False),
        f"{cores} tokens (C), first job free": (cores, False),
        f"{cores} tokens (C), first job holds one (pytest-kbuild)": (cores, True),
    }


def measure(tokens: int, hold: bool, sizes: list[int], work: int, tmp: Path) -> tuple[float, int]:
    """(wall / ideal, most jobs at once) of one run of builds of *sizes* jobs."""
    (tmp / "Makefile").write_text(MAKEFILE)
    log = tmp / "jobs.log"
    log.write_text("")
    server = jobserver.Jobserver(max(1, tokens)) if tokens >= 0 else None
    spare = None
    if server is not None and tokens == 0:
        # A jobserver with no token: every make runs its first job only.
        spare = os.open(server.path, os.O_RDWR)
        os.read(spare, 1)

    def build(n: int) -> None:
        argv = ["make", "-s", f"LOG={log}", f"N={n}", f"WORK={work}"]
        if server is None:
            subprocess.run([*argv, f"-j{-tokens}"], cwd=tmp, check=True)
            return
        with jobserver.slot(server.path) if hold else nullcontext():
            subprocess.run(jobserver.wrap(argv, server.path), cwd=tmp, check=True)

    cores = os.cpu_count() or 1
    cpu, start = children_cpu(), time.perf_counter()
    threads = [threading.Thread(target=build, args=(n,)) for n in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, used = time.perf_counter() - start, children_cpu() - cpu
    if spare is not None:
        os.close(spare)
    if server is not None:
        server.close()
    return wall / (used / cores), max_running(log)


def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--jobs", type=int, nargs="+", default=[24, 6], help="jobs of each build")
    p.add_argument("--work", type=int, default=3_000_000, help="awk loop count of a job")
    opts = p.parse_args(args)
    cores = os.cpu_count() or 1
    table = policies(cores, len(opts.jobs))
    print(f"machine: {cores} cores; {len(opts.jobs)} builds at once of {opts.jobs} jobs")
    results: dict[str, list[tuple[float, int]]] = {name: [] for name in table}
    with tempfile.TemporaryDirectory(prefix="kbuild-slots-") as tmp:
        for _ in range(opts.runs):
            for name, (tokens, hold) in table.items():
                results[name].append(measure(tokens, hold, opts.jobs, opts.work, Path(tmp)))
    for name, runs in results.items():
        ratio = statistics.median(r for r, _ in runs)
        peak = max(m for _, m in runs)
        print(f"{name:56s} wall/ideal {ratio:.2f}  most jobs at once {peak}")


if __name__ == "__main__":
    main()
