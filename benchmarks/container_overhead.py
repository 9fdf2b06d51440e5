#!/usr/bin/env python3
"""Per-step overhead of the podman and docker runtimes vs local.

Two measures, each a median over --runs rounds, runtimes interleaved in
every round so machine noise hits them alike:

1. one trivial step (``true``) through Runtime.run, bound to a workspace;
2. a whole fakelinux build (config + kernel: 2 make steps plus the
   per-build probes: image resolution, ``which``, ``--version``).

Prints seconds and the ratio to local, with the machine's core count.

    python benchmarks/container_overhead.py [--runs 15] [--engines podman docker]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from pytest_kbuild import Build, Status
from pytest_kbuild.runtime import make as make_runtime
from pytest_kbuild.runtime.base import Workspace

ROOT = Path(__file__).resolve().parent.parent
FAKELINUX = ROOT / "fakelinux"


def step_seconds(name: str, work: Path) -> float:
    ws = Workspace("x86_64", "gcc", FAKELINUX, work)
    rt = make_runtime(name).bind(ws)
    with open(os.devnull, "wb") as out:
        start = time.perf_counter()
        rc = rt.run(["true"], cwd=work, env={}, output=out)
        took = time.perf_counter() - start
    if rc != 0:
        raise SystemExit(f"{name}: 'true' exited {rc}")
    return took


def build_seconds(name: str, work: Path) -> float:
    start = time.perf_counter()
    result = Build(
        FAKELINUX,
        target_arch="x86_64",
        toolchain="gcc",
        kconfig="defconfig",
        targets=["config", "kernel"],
        runtime=name,
        jobs=2,
        output_dir=work / "out",
        build_dir=work / "build",
    ).run()
    took = time.perf_counter() - start
    if result.status is not Status.PASS:
        raise SystemExit(f"{name}: fakelinux build {result.status.value}; see {work}/out")
    return took


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--engines", nargs="+", default=["podman", "docker"])
    opts = p.parse_args()
    names = ["local", *opts.engines]
    steps: dict[str, list[float]] = {n: [] for n in names}
    builds: dict[str, list[float]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory(prefix="kbuild-bench-") as tmp:
        for i in range(opts.runs):
            for name in names if i % 2 == 0 else reversed(names):
                work = Path(tmp) / f"{name}-{i}"
                work.mkdir()
                steps[name].append(step_seconds(name, work))
                builds[name].append(build_seconds(name, work))
                shutil.rmtree(work)
    cores = os.cpu_count()
    print(f"container overhead, {cores} cores, median of {opts.runs} rounds")
    base_step = statistics.median(steps["local"])
    base_build = statistics.median(builds["local"])
    for name in names:
        s, b = statistics.median(steps[name]), statistics.median(builds[name])
        print(
            f"  {name:7s} step 'true': {s:6.3f} s (+{s - base_step:.3f} s)   "
            f"fakelinux config+kernel: {b:6.2f} s (x{b / base_build:.2f}, +{b - base_build:.2f} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
