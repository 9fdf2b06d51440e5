#!/usr/bin/env python3
"""Makespan of a matrix of real builds against the ideal, per way of sharing CPUs.

The matrix is one tinyconfig build (config and kernel targets) per arch,
gcc, six arches by default. Each mode runs the whole matrix through pytest
from empty build directories; its figure is wall time / ideal, where ideal
is the CPU seconds (user + system) of everything the run started divided by
the cores: 1.00 would be every core busy from start to end.

- serial: one build at a time, make -j<cores> (no xdist)
- oversubscribed: -n <workers>, make -j<cores> in each build, no jobserver
- shared: -n <workers>, one jobserver of <cores> slots for all builds
- split (only with --modes): -n <workers>, make -j<cores / workers> each

Modes alternate their order from round to round; medians are printed.

    python benchmarks/makespan.py --tree /path/to/linux [--runs 3] [--workers 2]
        [--builds 6 | --arches x86_64 arm64 ...] [--modes serial shared ...] [--nice 19]
        [--dry-run]

Builds run under `nice` (default 19) so the benchmark does not starve other
work on a shared machine; on a dedicated one pass --nice 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__:  # imported as benchmarks.<name> (the tests)
    from .measure import children_cpu
else:  # run as python benchmarks/<name>.py
    from measure import children_cpu

ARCHES = ["x86_64", "arm64", "riscv", "i386", "arm", "arc"]
MODES = ["serial", "oversubscribed", "shared", "split"]
DEFAULT_MODES = ["serial", "oversubscribed", "shared"]


def mode_args(mode: str, cores: int, workers: int) -> list[str]:
    """The pytest options of *mode* on *cores* with *workers* xdist workers."""
    xdist = ["-n", str(workers)]
    if mode == "serial":
        return ["--kbuild-jobserver=off", f"--kbuild-jobs={cores}"]
    if mode == "oversubscribed":
        return [*xdist, "--kbuild-jobserver=off", f"--kbuild-jobs={cores}"]
    if mode == "shared":
        return [*xdist, f"--kbuild-jobserver={cores}"]
    if mode == "split":
        return [*xdist, "--kbuild-jobserver=off", f"--kbuild-jobs={max(1, cores // workers)}"]
    raise ValueError(mode)


def command(work: Path, matrix: Path, mode: str, cores: int, workers: int, nice: int) -> list[str]:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    argv += [f"--kbuild-matrix={matrix}", f"--kbuild-results={work / ('results-' + mode)}"]
    argv += mode_args(mode, cores, workers)
    return ["nice", "-n", str(nice), *argv] if nice else argv


def run(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one pytest run; exits if it failed."""
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    wall, used = time.perf_counter() - start, children_cpu() - cpu
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return wall, used


def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--tree", required=True, help="kernel tree (or fakelinux, to try the script)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--workers", type=int, default=2, help="xdist workers (-n)")
    p.add_argument("--builds", type=int, default=len(ARCHES), help="the first N default arches")
    p.add_argument("--arches", nargs="+", help=f"arches to build (default: {' '.join(ARCHES)})")
    p.add_argument("--toolchain", default="gcc")
    p.add_argument("--kconfig", default="tinyconfig")
    p.add_argument("--modes", nargs="+", choices=MODES, default=DEFAULT_MODES)
    p.add_argument("--nice", type=int, default=19, help="niceness of the builds (0: none)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    opts = p.parse_args(args)
    cores = os.cpu_count() or 1
    arches = opts.arches or ARCHES[: opts.builds]
    with tempfile.TemporaryDirectory(prefix="kbuild-makespan-") as tmp:
        work = Path(tmp)
        matrix = work / "makespan.yaml"
        matrix.write_text(
            f"tree: {Path(opts.tree).resolve()}\narch: [{', '.join(arches)}]\n"
            f"toolchain: [{opts.toolchain}]\nkconfig: [{opts.kconfig}]\n"
            "targets: [config, kernel]\n"
        )
        print(
            f"machine: {cores} cores; {len(arches)} builds ({' '.join(arches)}; "
            f"{opts.toolchain} {opts.kconfig} config+kernel); {opts.workers} workers; "
            f"nice {opts.nice}"
        )
        commands = {m: command(work, matrix, m, cores, opts.workers, opts.nice) for m in opts.modes}
        if opts.dry_run:
            for mode, argv in commands.items():
                print(f"{mode}: {' '.join(argv)}")
            return
        ratios: dict[str, list[float]] = {m: [] for m in opts.modes}
        for i in range(opts.runs):
            order = opts.modes if i % 2 == 0 else opts.modes[::-1]
            parts = []
            for mode in order:
                wall, cpu = run(commands[mode], work)
                ratios[mode].append(wall / (cpu / cores))
                parts.append(f"{mode} {wall:.1f} s ({cpu:.1f} CPU s) {ratios[mode][-1]:.2f}")
            print(f"run {i + 1}: " + "; ".join(parts))
        medians = ", ".join(f"{m} {statistics.median(r):.2f}" for m, r in ratios.items())
        print(f"median wall/ideal over {opts.runs} runs on {cores} cores: {medians}")


if __name__ == "__main__":
    main()
