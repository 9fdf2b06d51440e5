#!/usr/bin/env python3
"""What the pytest layer costs as a matrix grows: 10, 100 and 1,000 builds.

Each size is a fakelinux matrix of N builds of 5 targets (x86_64 gcc
defconfig, told apart by name), run with ``-n 2`` (``--workers``), the HTML
report and JUnit on. A fakelinux build takes a fraction of a second, so what
is left of the wall time once the builds' own time is taken out is the
plugin's (and pytest's and xdist's). Per size it prints:

- wall: the run's wall time;
- builds: the targets' running time summed (results.json ``duration``),
  divided by the workers: the builds' own share of the wall time;
- overhead/build: (wall - start - builds) / N, where start is the wall time
  of a one-build run (pytest's and xdist's start-up), so a constant start
  does not hide in the small sizes; goal: the same from 10 to 1,000;
- the controller's peak RSS (a plugin loaded by ``-p`` reads it at exit);
- results.json, diagnostics.json, report.html: seconds to write each again
  from the run's results dir, by the functions the run calls (median of 3);
- the report's size, and the seconds Chromium takes to open it (page load,
  the script's rendering included; median of 3), goal < 2 s at 1,000;

then the merge of ``--shards`` (50) shard results dirs of the largest size
(each made by ``--kbuild-shard=I/50``), goal < 10 s.

    python benchmarks/large_matrix.py [--sizes 10 100 1000] [--workers 2]
        [--shards 50] [--no-browser]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = Path(__file__).resolve().parent
TARGETS = ["config", "kernel", "debugkernel", "modules", "headers"]
RSS_FILE = "KBUILD_BENCH_RSS_FILE"  # where the peakrss plugin writes the controller's peak


def matrix_text(builds: int, tree: Path = ROOT / "fakelinux") -> str:
    """A matrix of *builds* x86_64 gcc defconfig builds, each its own name."""
    includes = "".join(
        f"  - {{arch: x86_64, toolchain: gcc, name: b{i:04d}}}\n" for i in range(1, builds)
    )
    text = f"tree: {tree}\narch: [x86_64]\ntoolchain: [gcc]\nkconfig: [defconfig]\n"
    text += f"targets: [{', '.join(TARGETS)}]\n"
    return text + (f"include:\n{includes}" if includes else "")


def pytest_argv(matrix: Path, results: Path, workers: int, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "peakrss"]
    argv += [f"--kbuild-matrix={matrix}", f"--kbuild-results={results}"]
    argv += [f"--kbuild-html={results / 'report.html'}", f"--junitxml={results / 'junit.xml'}"]
    if workers:
        argv += ["-n", str(workers)]
    return [*argv, *extra]


def run(argv: list[str], cwd: Path, rss_file: Path | None = None) -> float:
    """Wall seconds of one pytest run; exits if it did not pass."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCHMARKS), str(ROOT)])}
    env.pop("PYTEST_ADDOPTS", None)
    if rss_file:
        env[RSS_FILE] = str(rss_file)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return took


def make_seconds(results: Path) -> float:
    """The targets' running time summed over results.json."""
    summary = json.loads((results / "results.json").read_text())
    return sum(
        float(t.get("duration") or 0)
        for b in summary["builds"].values()
        for t in b["targets"].values()
    )


def median_of(runs: int, step: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def writers(results: Path) -> dict[str, float]:
    """Seconds to write results.json, diagnostics.json and report.html again,
    as plugin/reporting.py writes them at the end of a run."""
    from pytest_kbuild.report import grouping
    from pytest_kbuild.report import html as report
    from pytest_kbuild.results import names, write_json

    summary = json.loads((results / "results.json").read_text())
    ids = set(names(summary["builds"]).values())
    again = results.parent / f"{results.name}-again"
    again.mkdir(exist_ok=True)

    def diagnostics() -> None:
        grouping.write(again, grouping.group(grouping.read_builds(results, ids)))

    return {
        "results.json": median_of(3, lambda: write_json(again / "results.json", summary)),
        "diagnostics.json": median_of(3, diagnostics),
        "report.html": median_of(3, lambda: report.write(results, again / "report.html", ids)),
    }


def open_seconds(page_file: Path) -> float | None:
    """Median seconds Chromium takes to load *page_file* (None: no browser)."""
    try:
        from playwright import sync_api
    except ImportError:
        return None
    if not Path("/usr/bin/chromium").exists():
        return None
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:

            def load() -> None:
                page = browser.new_page()
                page.goto(page_file.as_uri(), wait_until="load", timeout=120_000)
                page.close()

            load()  # the first start of a renderer is not the report's cost
            return median_of(3, load)
        finally:
            browser.close()


def merge_seconds(work: Path, builds: int, shards: int, workers: int) -> float:
    """Seconds of ``pytest-kbuild merge`` of *shards* results dirs of a
    *builds*-build matrix."""
    matrix = work / "shards.yaml"
    matrix.write_text(matrix_text(builds))
    dirs = []
    for i in range(1, shards + 1):
        results = work / f"shard-{i}"
        run(pytest_argv(matrix, results, 0, f"--kbuild-shard={i}/{shards}"), work)
        dirs.append(str(results))
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_kbuild.cli", "merge", str(work / "merged"), *dirs],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"merge failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    merged = json.loads((work / "merged" / "results.json").read_text())
    if len(merged["builds"]) != builds:
        sys.exit(f"merge kept {len(merged['builds'])} builds of {builds}")
    return took


def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    p.add_argument("--workers", type=int, default=2, help="xdist workers (-n)")
    p.add_argument("--shards", type=int, default=50, help="shards to merge (0: no merge)")
    p.add_argument("--no-browser", action="store_true", help="do not open the reports")
    opts = p.parse_args(args)
    print(
        f"machine: {os.cpu_count()} cores; fakelinux; {len(TARGETS)} targets a build; "
        f"-n {opts.workers}"
    )
    with tempfile.TemporaryDirectory(prefix="kbuild-large-") as tmp:
        work = Path(tmp)
        one = work / "m1.yaml"
        one.write_text(matrix_text(1))
        start = run(pytest_argv(one, work / "r1", opts.workers), work)
        print(f"start (a one-build run): {start:.2f} s")
        head = (
            "builds",
            "wall s",
            "builds s",
            "overhead/build s",
            "peak RSS MiB",
            "results.json s",
            "diagnostics.json s",
            "report.html s",
            "report KiB",
            "Chromium open s",
        )
        print(" | ".join(head))
        for size in opts.sizes:
            matrix = work / f"m{size}.yaml"
            matrix.write_text(matrix_text(size))
            results = work / f"r{size}"
            rss = work / f"rss-{size}"
            wall = run(pytest_argv(matrix, results, opts.workers), work, rss)
            own = make_seconds(results) / max(1, opts.workers)
            per_build = (wall - start - own) / size
            peak = int(rss.read_text()) / 1024
            times = writers(results)
            page = results / "report.html"
            opened = None if opts.no_browser else open_seconds(page)
            cells = [
                str(size),
                f"{wall:.1f}",
                f"{own:.1f}",
                f"{per_build:.3f}",
                f"{peak:.0f}",
                *(f"{t:.3f}" for t in times.values()),
                f"{page.stat().st_size / 1024:.0f}",
                "-" if opened is None else f"{opened:.2f}",
            ]
            print(" | ".join(cells), flush=True)
        if opts.shards:
            largest = max(opts.sizes)
            took = merge_seconds(work, largest, opts.shards, opts.workers)
            print(f"merge of {opts.shards} shards ({largest} builds): {took:.2f} s")


if __name__ == "__main__":
    main()
