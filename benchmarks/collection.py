#!/usr/bin/env python3
"""Collection time of generated matrices (10,000 and 100,000 items).

Prints, per size, the median wall time of ``pytest --collect-only -q`` on a
generated matrix, the same for a one-build matrix (pytest's own start-up),
and their difference: the cost of collecting the items.

    python benchmarks/collection.py [--runs 5] [--sizes 10000 100000]
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

ROOT = Path(__file__).resolve().parent.parent
ARCHES = ["x86_64", "arm64", "arm", "riscv", "i386", "powerpc", "s390", "mips", "sh", "sparc"]
TOOLCHAINS = [
    "gcc",
    "gcc-10",
    "gcc-11",
    "gcc-12",
    "gcc-13",
    "clang",
    "clang-14",
    "clang-15",
    "clang-16",
    "clang-19",
]
TARGETS = ["config", "kernel", "debugkernel", "modules", "headers"]


def matrix(items: int) -> str:
    per_kconfig = len(ARCHES) * len(TOOLCHAINS) * len(TARGETS)
    kconfigs = [f"k{i:05d}_defconfig" for i in range(max(1, items // per_kconfig))]
    return (
        f"tree: {ROOT / 'fakelinux'}\narch: {ARCHES}\ntoolchain: {TOOLCHAINS}\n"
        f"kconfig: {kconfigs}\ntargets: {TARGETS}\n"
    )


def collect(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "-q",
            f"--kbuild-matrix={path}",
        ],
        cwd=path.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"collection failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    count = sum(1 for line in proc.stdout.splitlines() if "::" in line)
    return took, count


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    opts = p.parse_args()
    print(f"machine: {os.cpu_count()} cores; median of {opts.runs} runs")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "one.yaml"
        base.write_text(
            f"tree: {ROOT / 'fakelinux'}\narch: [x86_64]\ntoolchain: [gcc]\ntargets: [config]\n"
        )
        startup = statistics.median(collect(base)[0] for _ in range(opts.runs))
        print(f"{'items':>8} {'wall s':>8} {'collect s':>9} {'us/item':>8}")
        print(f"{1:>8} {startup:8.2f} {0:9.2f} {'':>8}")
        previous: tuple[float, int] | None = None
        for size in opts.sizes:
            path = Path(tmp) / f"m{size}.yaml"
            path.write_text(matrix(size))
            runs = [collect(path) for _ in range(opts.runs)]
            count = runs[0][1]
            wall = statistics.median(r[0] for r in runs)
            cost = wall - startup
            growth = (
                f"  x{cost / previous[0]:.1f} for x{count / previous[1]:.0f}" if previous else ""
            )
            print(f"{count:>8} {wall:8.2f} {cost:9.2f} {cost / count * 1e6:8.1f}{growth}")
            previous = (cost, count)


if __name__ == "__main__":
    main()
