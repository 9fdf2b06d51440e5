#!/usr/bin/env python3
"""Collection time of a TuxSuite plan against a matrix of the same builds.

Collects tests/unit/data/plans/large.yaml (and the same plan with its jobs
repeated, for a larger size) with ``pytest --collect-only -q``, and a
matrix file whose include: entries are the same builds (same arch,
toolchain, kconfig, fragments, targets, variables; a plan's SKIP build is a
gcc build of the matrix). Prints the median wall time of each, the
median CPU time of reading the file into BuildSpecs (matrix.load, in this
process: the part a plan changes) and the plan / matrix ratios.

    python benchmarks/plan_collection.py [--runs 5] [--repeat 1 10]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from pytest_kbuild import matrix

if __package__:  # imported as benchmarks.<name> (the tests)
    from .collection import ROOT, collect
else:  # run as python benchmarks/<name>.py
    from collection import ROOT, collect

PLAN = ROOT / "tests" / "unit" / "data" / "plans" / "large.yaml"
TREE = ROOT / "fakelinux"


def plan_text(repeat: int) -> str:
    data = yaml.safe_load(PLAN.read_text())
    jobs = [
        {**job, "name": f"{job['name']}-{i}" if repeat > 1 else job["name"]}
        for i in range(repeat)
        for job in data["jobs"]
    ]
    return yaml.safe_dump({"tree": str(TREE), **data, "jobs": jobs}, sort_keys=False)


def matrix_text(plan: Path) -> str:
    """A matrix with one include: entry per build of *plan*."""
    include = []
    for b in matrix.load(plan, check=False).builds:
        include.append(
            {
                "arch": b.arch if not b.skip_reason else "x86_64",
                "toolchain": b.toolchain if not b.skip_reason else "gcc",
                "kconfig": b.kconfig,
                "kconfig_add": list(b.kconfig_add),
                "targets": list(b.targets) or ["config"],
                "make_variables": dict(b.make_variables),
                "env": dict(b.env),
                "name": b.id,
            }
        )
    return yaml.safe_dump(
        {
            "tree": str(TREE),
            "arch": ["x86_64"],
            "toolchain": ["gcc"],
            "kconfig": ["k0config"],
            "include": include,
        },
        sort_keys=False,
    )


def load_time(path: Path) -> float:
    start = time.process_time()
    matrix.load(path, check=False)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--repeat", type=int, nargs="+", default=[1, 10])
    opts = p.parse_args(argv)
    print(f"median of {opts.runs} runs of pytest --collect-only -q")
    print(f"{'file':>8} {'builds':>7} {'items':>7} {'wall s':>8} {'load ms':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in opts.repeat:
            plan = Path(tmp) / f"plan{repeat}.yaml"
            plan.write_text(plan_text(repeat))
            same = Path(tmp) / f"matrix{repeat}.yaml"
            same.write_text(matrix_text(plan))
            builds = len(matrix.load(plan, check=False).builds)
            walls, loads = {}, {}
            for label, path in (("plan", plan), ("matrix", same)):
                runs = [collect(path) for _ in range(opts.runs)]
                walls[label] = statistics.median(r[0] for r in runs)
                loads[label] = statistics.median(load_time(path) for _ in range(opts.runs))
                print(
                    f"{label:>8} {builds:>7} {runs[0][1]:>7} {walls[label]:8.2f} "
                    f"{loads[label] * 1e3:8.1f}"
                )
            print(
                f"{'':>8} plan / matrix: wall {walls['plan'] / walls['matrix']:.2f}, "
                f"load {loads['plan'] / loads['matrix']:.2f}"
            )


if __name__ == "__main__":
    main()
