#!/usr/bin/env python3
"""Wall time of a warm ccache rebuild of a real matrix vs the cold build.

Each round builds the matrix through pytest-kbuild with ``wrapper: ccache``
twice, serially, with the same -j: cold (an empty cache directory) and then
warm (the same cache, fresh build directories), and prints warm / cold with
the hit rate of each side. The median ratio over --runs is the figure.
Kconfig, linking, objtool and the image compression do not go through the
compiler cache, so they bound the ratio from below.

    python benchmarks/ccache_warm.py --tree /usr/src/linux-source-6.1 [--runs 1]
        [--arch x86_64 riscv --toolchain gcc --kconfig tinyconfig --targets config kernel]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_plugin(work: Path, matrix: Path, side: str, cache: Path, jobs: int) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--kbuild-matrix={matrix}",
            f"--kbuild-build-dir={work / side / 'build'}",
            f"--kbuild-results={work / side / 'results'}",
            f"--kbuild-cache-dir={cache}",
            f"--kbuild-jobs={jobs}",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{side} run failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return took


def hit_rate(results: Path) -> str:
    """``hits/cacheable (percent)`` summed over the metadata.json files of a run."""
    hits = misses = 0
    for meta in results.glob("*/*/metadata.json"):
        counts = json.loads(meta.read_text())["wrapper"].get("counts", {})
        hits, misses = hits + counts.get("hits", 0), misses + counts.get("misses", 0)
    return f"{hits}/{hits + misses} hits ({100 * hits / max(1, hits + misses):.1f}%)"


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--tree", required=True)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--arch", nargs="+", default=["x86_64", "riscv"])
    p.add_argument("--toolchain", default="gcc")
    p.add_argument("--kconfig", default="tinyconfig")
    p.add_argument("--targets", nargs="+", default=["config", "kernel"])
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    opts = p.parse_args()
    tree = Path(opts.tree).resolve()
    print(
        f"machine: {os.cpu_count()} cores; make -j{opts.jobs}; builds one after another; "
        f"{'+'.join(opts.arch)} {opts.toolchain} {opts.kconfig} {' '.join(opts.targets)}"
    )
    ratios = []
    with tempfile.TemporaryDirectory(prefix="kbuild-bench-ccache-") as tmp:
        work = Path(tmp)
        matrix = work / "bench.yaml"
        matrix.write_text(
            f"tree: {tree}\narch: [{', '.join(opts.arch)}]\ntoolchain: [{opts.toolchain}]\n"
            f"kconfig: [{opts.kconfig}]\ntargets: [{', '.join(opts.targets)}]\nwrapper: ccache\n"
        )
        for i in range(opts.runs):
            cache = work / "cache"
            # Every round starts from nothing; emptying is outside the timing.
            for old in (cache, work / "cold", work / "warm"):
                shutil.rmtree(old, ignore_errors=True)
            cold = run_plugin(work, matrix, "cold", cache, opts.jobs)
            warm = run_plugin(work, matrix, "warm", cache, opts.jobs)
            ratios.append(warm / cold)
            print(
                f"run {i + 1}: cold {cold:7.1f} s [{hit_rate(work / 'cold' / 'results')}]  "
                f"warm {warm:7.1f} s [{hit_rate(work / 'warm' / 'results')}]  "
                f"ratio {ratios[-1]:.3f}"
            )
    print(
        f"median wall ratio warm/cold over {opts.runs} runs on {os.cpu_count()} cores: "
        f"{statistics.median(ratios):.3f}"
    )


if __name__ == "__main__":
    main()
