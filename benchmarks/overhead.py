#!/usr/bin/env python3
"""Wall time of pytest-kbuild vs the same raw make commands, same real build.

A warm-up run through the plugin records the exact commands (the ``$ ``
lines of build.log); then each round runs the plugin and the raw commands
(each side first in turn, each in a fresh build directory) and prints the
ratio plugin / raw. The median ratio is the figure. A third side replays
the raw commands once more: its ratio to the first replay shows how far
two identical runs differ on this machine, and the hypervisor's stolen CPU
seconds are printed per side. Two identical runs differ by several per
cent on a shared VM, so the script also prints, from the plugin's own
metadata.json, the seconds its run spent outside its targets' commands
(Python and pytest start-up, collection, probes, metadata, reporting) and
the ratio of its wall time to the time in those commands: the overhead
with the machine's speed cancelled out.

With --jobserver the plugin's side builds under the shared jobserver
(``--kbuild-jobserver=JOBS``: a FIFO of JOBS slots, as ``-n`` gives, each
command holding one for make's first job) while the raw side stays plain
``make --jobs=JOBS``: the ratio is what the budget costs a build running
alone, and what it would gain were a sub-make to escape it (the kernel's
tools/ sub-makes, perf's own Makefile).

    python benchmarks/overhead.py --tree /usr/src/linux-source-6.1 [--runs 3]
        [--arch x86_64 --toolchain gcc --kconfig tinyconfig --targets config kernel]
        [--jobserver]
"""

from __future__ import annotations

import argparse
import json
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
    from .measure import stolen, timed
else:  # run as python benchmarks/<name>.py
    from measure import stolen, timed


def run_plugin(
    work: Path, matrix: Path, build_dir: Path, jobs: int, jobserver: bool = False
) -> float:
    budget = f"--kbuild-jobserver={jobs}" if jobserver else f"--kbuild-jobs={jobs}"
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
            budget,
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


def time_in_targets(results: Path) -> float:
    """Seconds the plugin's last run spent in its targets' commands, from
    the ``duration`` of every target in metadata.json."""
    meta = json.loads(next(results.glob("*/*/metadata.json")).read_text())
    return sum(float(t["duration"]) for t in meta["targets"].values())


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


def main(argv: list[str] | None = None) -> None:
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
    p.add_argument(
        "--jobserver", action="store_true", help="the plugin's side under a JOBS-slot jobserver"
    )
    opts = p.parse_args(argv)
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
        plugin_side = f"a {opts.jobs}-slot jobserver" if opts.jobserver else f"make -j{opts.jobs}"
        print(
            f"machine: {os.cpu_count()} cores; plugin {plugin_side}, raw make -j{opts.jobs}; "
            f"{opts.arch} {opts.toolchain} {opts.kconfig} {' '.join(opts.targets)}"
        )
        # The warm-up runs with --kbuild-jobs: its commands are the raw side's.
        warm = run_plugin(work, matrix, plugin_dir, opts.jobs)
        commands = recorded_commands(work)
        old_dir = plugin_dir / matrix.stem / f"{opts.arch}-{opts.toolchain}-{opts.kconfig}"
        print(f"warm-up (plugin) {warm:.1f} s; raw commands replayed: {len(commands)}")
        # The "raw again" side replays the same commands once more: its
        # ratio to "raw" is what this machine's noise alone gives (an A/A
        # control), the yardstick for the plugin's ratio.
        sides = ("plugin", "raw", "raw again")
        wall: dict[str, list[float]] = {n: [] for n in sides}
        outside: list[float] = []  # plugin wall seconds outside its targets' commands
        cpu: dict[str, list[float]] = {n: [] for n in sides}
        dirs = {"plugin": plugin_dir, "raw": work / "raw", "raw again": work / "raw-again"}

        def run(name: str) -> None:
            if name == "plugin":
                run_plugin(work, matrix, plugin_dir, opts.jobs, opts.jobserver)
            else:
                run_raw(commands, tree, old_dir, dirs[name])

        for i in range(opts.runs):
            # Each side goes first in turn; all start from an empty build
            # directory, and emptying one is not part of any measurement.
            order = sides[i % len(sides) :] + sides[: i % len(sides)]
            steal = []
            for name in order:
                shutil.rmtree(dirs[name], ignore_errors=True)
                before = stolen()
                w, c = timed(lambda name=name: run(name))
                steal.append(f"{name} {stolen() - before:.1f}")
                wall[name].append(w)
                cpu[name].append(c)
                if name == "plugin":
                    outside.append(w - time_in_targets(work / "results"))
            cols = "  ".join(f"{n} {wall[n][i]:6.1f} s ({cpu[n][i]:6.1f} CPU s)" for n in sides)
            print(
                f"run {i + 1} ({' then '.join(order)}): {cols}  "
                f"plugin/raw {wall['plugin'][i] / wall['raw'][i]:.3f}  "
                f"raw again/raw {wall['raw again'][i] / wall['raw'][i]:.3f}  "
                f"stolen s: {', '.join(steal)}; plugin outside make {outside[-1]:.2f} s",
                flush=True,
            )
        # Within the plugin's own run, machine speed cancels out: the time it
        # adds around the same make commands, as a ratio to those commands.
        within = statistics.median(
            w / (w - o) for w, o in zip(wall["plugin"], outside, strict=True)
        )
        print(
            f"median plugin time outside make over {opts.runs} runs: "
            f"{statistics.median(outside):.2f} s; plugin wall / its make commands: {within:.4f}"
        )
        for name in ("plugin", "raw again"):
            w_ratio = statistics.median(a / b for a, b in zip(wall[name], wall["raw"], strict=True))
            c_ratio = statistics.median(a / b for a, b in zip(cpu[name], cpu["raw"], strict=True))
            print(
                f"median {name}/raw over {opts.runs} runs on {os.cpu_count()} cores: "
                f"wall {w_ratio:.3f}, CPU {c_ratio:.3f}"
                + (" (goal <= 1.02)" if name == "plugin" else " (the noise floor)")
            )


if __name__ == "__main__":
    main()
