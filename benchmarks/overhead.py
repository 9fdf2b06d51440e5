#!/usr/bin/env python3
"""Wall time of pytest-kbuild vs the same raw make commands, same real build.

A warm-up run through the plugin records the exact commands (the ``$ ``
lines of build.log); then each round runs the plugin and the raw commands
(in alternating order, each in a fresh build directory) and prints the
ratio plugin / raw. The median ratio is the figure.

    python benchmarks/overhead.py --tree /usr/src/linux-source-6.1 [--runs 3]
        [--arch x86_64 --toolchain gcc --kconfig tinyconfig --targets config kernel]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__:  # imported as benchmarks.<name> (the tests)
    from .measure import timed
else:  # run as python benchmarks/<name>.py
    from measure import timed


def run_plugin(work: Path, matrix: Path, build_dir: Path, jobs: int) -> float:
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
            f"--kbuild-build-dir={build_dir}",
            f"--kbuild-jobs={jobs}",
            f"--kbuild-results={work / 'results'}",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"plugin run failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return took


def recorded_commands(work: Path) -> list[list[str]]:
    log = next((work / "results").glob("*/*/build.log"))
    return [
        shlex.split(line[2:])
        for line in log.read_text(errors="replace").splitlines()
        if line.startswith("$ ")
    ]


def run_raw(commands: list[list[str]], tree: Path, old_dir: Path, build_dir: Path) -> float:
    start = time.perf_counter()
    build_dir.mkdir(parents=True)
    for argv in commands:
        argv = [a.replace(str(old_dir), str(build_dir)) for a in argv]
        subprocess.run(
            argv, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=True
        )
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--tree", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--arch", default="x86_64")
    p.add_argument("--toolchain", default="gcc")
    p.add_argument("--kconfig", default="tinyconfig")
    p.add_argument("--targets", nargs="+", default=["config", "kernel"])
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    opts = p.parse_args()
    tree = Path(opts.tree).resolve()
    with tempfile.TemporaryDirectory(prefix="kbuild-bench-") as tmp:
        work = Path(tmp)
        matrix = work / "bench.yaml"
        matrix.write_text(
            f"arch: [{opts.arch}]\ntoolchain: [{opts.toolchain}]\nkconfig: [{opts.kconfig}]\n"
            f"targets: {opts.targets}\n"
        )
        plugin_dir = work / "build-plugin"
        matrix.write_text(matrix.read_text() + f"tree: {tree}\n")
        print(
            f"machine: {os.cpu_count()} cores; make -j{opts.jobs}; "
            f"{opts.arch} {opts.toolchain} {opts.kconfig} {' '.join(opts.targets)}"
        )
        warm = run_plugin(work, matrix, plugin_dir, opts.jobs)
        commands = recorded_commands(work)
        old_dir = plugin_dir / matrix.stem / f"{opts.arch}-{opts.toolchain}-{opts.kconfig}"
        print(f"warm-up (plugin) {warm:.1f} s; raw commands replayed: {len(commands)}")
        ratios, cpu_ratios = [], []
        for i in range(opts.runs):
            raw_dir = work / f"raw-{i}"

            def plugin() -> None:
                run_plugin(work, matrix, plugin_dir, opts.jobs)

            def raw(raw_dir: Path = raw_dir) -> None:
                run_raw(commands, tree, old_dir, raw_dir)

            # Both sides start from an empty build directory; emptying the
            # previous one is not part of either measurement.
            shutil.rmtree(plugin_dir, ignore_errors=True)
            if i % 2 == 0:
                t_plugin, c_plugin = timed(plugin)
                t_raw, c_raw = timed(raw)
            else:
                t_raw, c_raw = timed(raw)
                t_plugin, c_plugin = timed(plugin)
            shutil.rmtree(raw_dir, ignore_errors=True)
            ratios.append(t_plugin / t_raw)
            cpu_ratios.append(c_plugin / c_raw)
            print(
                f"run {i + 1}: plugin {t_plugin:7.1f} s ({c_plugin:6.1f} CPU s)  "
                f"raw make {t_raw:7.1f} s ({c_raw:6.1f} CPU s)  "
                f"ratio {ratios[-1]:.3f} (CPU {cpu_ratios[-1]:.3f})"
            )
        print(
            f"median wall ratio plugin/raw over {opts.runs} runs: {statistics.median(ratios):.3f}"
        )
        print(
            f"median CPU ratio plugin/raw over {opts.runs} runs: {statistics.median(cpu_ratios):.3f}"
        )


if __name__ == "__main__":
    main()
