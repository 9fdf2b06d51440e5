#!/usr/bin/env python3
"""Makespan of a 200-build matrix on 16, 64 and 256 slots, on paper.

The scheduler's packing was only ever measured on 2 cores. This replays
real per-target running times through the project's own scheduling code on
bigger machines, in a deterministic discrete-event simulation:

- the matrix is ``--builds`` (200) builds cycled from the measured ones:
  build i is measured build i mod n, in the order of their scopes;
- the order is ``run.scheduling.queue_order``, the one the xdist scheduler
  uses, on the durations pytest's cache would remember (a build's running
  times summed, as plugin/reporting.py records them); a build's targets are
  one work unit, grouped by ``results.scope_of`` as xdist's loadscope does;
- W workers, W as ``-n auto`` picks for S CPUs with the shared jobserver
  (``run.scheduling.auto_workers``, memory unbounded): each runs one build
  at a time, its targets in order, and takes the next build from the queue
  when its build is done. The "look-ahead" columns use xdist's own rule
  instead: loadscope gives a worker its next build as soon as 2 or fewer of
  its targets are left, so that build waits for the worker's current one;
- all running targets share S jobserver slots equally (processor sharing),
  each up to the slots it can use: a make target the jobs it was measured
  with (``--jobs-per-target`` to change that), boot and kunit one (QEMU
  holds one slot);
- a target's CPU work is its running time x the jobs it was measured with:
  on the 2-core machines every make target is taken to have kept both its
  slots busy for its whole running time (an upper bound: serial phases
  used one), a boot or kunit target one.

The ideal is the CPU work over S, or the longest build alone if that is
longer; ratio = makespan / ideal, never below 1.

    python benchmarks/simulate_makespan.py [--results DIR ...] [--data FILE]
        [--builds 200] [--slots 2 16 64 256] [--jobs-per-target N] [--workers N]

Without --results the figures come from data/real_target_times.yaml, which
says where each was written down.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pytest_kbuild.definitions.targets import Target
from pytest_kbuild.errors import KbuildError
from pytest_kbuild.results import METADATA, SUMMARY, Scope, scope_of
from pytest_kbuild.run.scheduling import auto_workers, queue_order

DATA = Path(__file__).parent / "data" / "real_target_times.yaml"
SLOTS = [2, 16, 64, 256]
BUILDS = 200
# The target kinds that run QEMU under one jobserver slot (boot/qemu.py, boot/kunit.py).
ONE_SLOT_KINDS = ("boot", "kunit")
# xdist's loadscope hands a worker more work once this many of its items are left.
LOADSCOPE_LOOKAHEAD = 2


@dataclass(frozen=True)
class SimTarget:
    """One target as measured: its running time and the jobs it had."""

    name: str
    seconds: float
    jobs: int

    @property
    def one_slot(self) -> bool:
        try:
            return Target.load(self.name).kind in ONE_SLOT_KINDS
        except KbuildError:  # "config+kernel": several targets measured together
            return False

    @property
    def work(self) -> float:
        """CPU seconds: the running time x the slots it is taken to have kept busy."""
        return self.seconds * (1 if self.one_slot else self.jobs)


@dataclass(frozen=True)
class SimBuild:
    scope: str
    targets: tuple[SimTarget, ...]

    @property
    def remembered(self) -> float:
        """What pytest's cache would remember of it: its running times summed."""
        return sum(t.seconds for t in self.targets)


def load_data(path: Path) -> list[SimBuild]:
    """The builds of a data file such as data/real_target_times.yaml."""
    doc = yaml.safe_load(path.read_text())
    return [
        SimBuild(
            str(Scope(b["matrix"], b["id"])),
            tuple(SimTarget(n, float(s), int(b["jobs"])) for n, s in b["targets"].items()),
        )
        for b in doc["builds"]
    ]


def load_results(top: Path) -> list[SimBuild]:
    """The builds of a results dir: results.json's running times (schema 3:
    ``duration`` without the ``queued`` wait), the jobs from each metadata.json."""
    summary = json.loads((top / SUMMARY).read_text())
    if summary.get("schema", 1) < 3:
        sys.exit(
            f"{top / SUMMARY}: schema {summary.get('schema', 1)} counts slot waits in durations"
        )
    builds = []
    for build_id, build in sorted(summary["builds"].items()):
        scope = Scope(build["matrix"], build_id)
        jobs = measured_jobs(json.loads((scope.folder(top) / METADATA).read_text()))
        ran = [
            SimTarget(name, float(t["duration"]), jobs)
            for name, t in build["targets"].items()
            if t.get("outcome") in ("passed", "failed")
        ]
        if ran:
            builds.append(SimBuild(str(scope), tuple(ran)))
    return builds


def measured_jobs(metadata: dict[str, Any]) -> int:
    """The make jobs a build had: --kbuild-jobs, else its jobserver's slots,
    at most the machine's CPUs."""
    cpus = (metadata.get("host") or {}).get("cpus") or 0
    jobs = metadata.get("jobs") or (metadata.get("jobserver") or {}).get("slots") or cpus or 1
    return int(min(jobs, cpus) if cpus else jobs)


def cycle(builds: Sequence[SimBuild], count: int) -> list[SimBuild]:
    """*count* builds: build i is measured build i mod n (by scope), named
    ``<scope>-<i>`` (unique even if two results dirs hold the same build)."""
    base = sorted(builds, key=lambda b: b.scope)
    return [
        SimBuild(f"{base[i % len(base)].scope}-{i}", base[i % len(base)].targets)
        for i in range(count)
    ]


def work_units(builds: Iterable[SimBuild]) -> dict[str, list[SimTarget]]:
    """Each build's targets in order, grouped from their node ids as xdist's
    loadscope groups them (everything before the last ``::``)."""
    units: dict[str, list[SimTarget]] = {}
    for build in builds:
        for target in build.targets:
            units.setdefault(scope_of(f"{build.scope}::{target.name}"), []).append(target)
    return units


def shares(caps: Sequence[float], slots: int) -> list[float]:
    """*slots* shared equally by jobs that can each use at most its cap
    (water-filling: what one cannot use goes to the others)."""
    rates = [0.0] * len(caps)
    left, todo = float(slots), sorted(range(len(caps)), key=lambda i: caps[i])
    for n, i in enumerate(todo):
        rates[i] = min(caps[i], left / (len(todo) - n))
        left -= rates[i]
    return rates


@dataclass
class _Worker:
    assigned: deque[list[SimTarget]]
    pending: int = 0  # targets assigned and not finished, the running one included
    left: float = 0.0  # CPU work left of the running target
    cap: float = 0.0  # slots the running target can use; 0: idle


def simulate(
    builds: Sequence[SimBuild],
    slots: int,
    workers: int,
    *,
    jobs_per_target: int | None = None,
    lookahead: int = 0,
) -> float:
    """Seconds until the last target of *builds* is done on *workers* xdist
    workers sharing *slots* jobserver slots. A worker gets its next build
    when *lookahead* or fewer of its targets are left (0: when its build is
    done; xdist's loadscope: 2); *jobs_per_target* caps a make target's
    slots instead of the jobs it was measured with."""
    units = work_units(builds)
    queue = deque(queue_order(units, {b.scope: b.remembered for b in builds}))
    pool = [_Worker(deque()) for _ in range(min(workers, len(units)))]

    def assign(w: _Worker) -> None:
        unit = units[queue.popleft()]
        w.assigned.append(list(unit))
        w.pending += len(unit)

    def start(w: _Worker) -> None:
        while w.assigned and not w.assigned[0]:
            w.assigned.popleft()
        if not w.assigned:
            w.cap = 0.0
            return
        target = w.assigned[0].pop(0)
        jobs = 1 if target.one_slot else (jobs_per_target or target.jobs)
        w.left, w.cap = target.work, float(min(jobs, slots))

    # As loadscope's schedule(): one build each, then one more to each
    # worker whose pending targets are few enough; then as targets finish.
    for w in pool:
        assign(w)
    for w in pool:
        if queue and w.pending <= lookahead:
            assign(w)
        start(w)
    now = 0.0
    while running := [w for w in pool if w.cap]:
        rates = shares([w.cap for w in running], slots)
        times = [w.left / r for w, r in zip(running, rates, strict=True)]
        step = min(times)
        now += step
        done = []
        for w, r, t in zip(running, rates, times, strict=True):
            if t <= step * (1 + 1e-9):  # finishes now (rounding apart)
                done.append(w)
            else:
                w.left -= r * step
        for w in done:  # in worker order: the first worker takes the next build
            w.pending -= 1
            if queue and w.pending <= lookahead:
                assign(w)
            start(w)
    return now


def ideal(builds: Sequence[SimBuild], slots: int, jobs_per_target: int | None = None) -> float:
    """The CPU work over *slots*, or the longest build alone if longer."""
    work = sum(t.work for b in builds for t in b.targets)

    def alone(t: SimTarget) -> float:
        jobs = 1 if t.one_slot else (jobs_per_target or t.jobs)
        return t.work / min(jobs, slots)

    return max(work / slots, max(sum(alone(t) for t in b.targets) for b in builds))


def table(
    builds: Sequence[SimBuild],
    slot_counts: Iterable[int],
    jobs_per_target: int | None = None,
    workers: int | None = None,
) -> list[str]:
    """The printed table: one row per slot count."""
    head = f"{'slots':>5} {'workers':>7} {'makespan':>9} {'ideal':>8} {'ratio':>6}"
    lines = [f"{head} {'look-ahead':>10} {'ratio':>6}"]
    for slots in slot_counts:
        w = workers or auto_workers(slots, 0, shared_budget=True)
        best = ideal(builds, slots, jobs_per_target)
        span = simulate(builds, slots, w, jobs_per_target=jobs_per_target)
        ahead = simulate(
            builds, slots, w, jobs_per_target=jobs_per_target, lookahead=LOADSCOPE_LOOKAHEAD
        )
        # Equal to the ideal but for float rounding (the event times add up
        # steps): shown as equal, not as a few nanoseconds better.
        span, ahead = (best if abs(x - best) <= 1e-9 * best else x for x in (span, ahead))
        lines.append(
            f"{slots:>5} {w:>7} {span:>8.0f}s {best:>7.0f}s {span / best:>6.2f}"
            f" {ahead:>9.0f}s {ahead / best:>6.2f}"
        )
    return lines


def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--results", type=Path, nargs="+", metavar="DIR", help="real results dirs")
    p.add_argument("--data", type=Path, default=DATA, help="a data file (without --results)")
    p.add_argument("--builds", type=int, default=BUILDS)
    p.add_argument("--slots", type=int, nargs="+", default=SLOTS)
    p.add_argument("--jobs-per-target", type=int, metavar="N", help="default: as measured")
    p.add_argument("--workers", type=int, metavar="N", help="default: as -n auto picks")
    o = p.parse_args(args)
    measured = [b for d in o.results for b in load_results(d)] if o.results else load_data(o.data)
    if not measured:
        sys.exit("no build with a target that ran")
    builds = cycle(measured, o.builds)
    work = sum(t.work for b in builds for t in b.targets)
    if not work:
        sys.exit("the builds' targets took no time: nothing to simulate")
    jobs = f"{o.jobs_per_target}" if o.jobs_per_target else "as measured"
    print(
        f"{len(builds)} builds cycled from {len(measured)} measured, {work:,.0f} CPU s;"
        f" slots per make target: {jobs}, per boot/kunit: 1"
    )
    print("\n".join(table(builds, o.slots, o.jobs_per_target, o.workers)))


if __name__ == "__main__":
    main()
