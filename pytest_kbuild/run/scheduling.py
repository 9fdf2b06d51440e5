"""How long a build is expected to take: remembered durations from earlier
runs (pytest's cache), else an estimate from its kconfig and targets; and
how many builds ``-n auto`` runs at once.

Used to start the longest builds first. No pytest import: plugin/xdist.py reads
and writes the cache and hands the numbers in.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ..spec import BuildSpec

CACHE_KEY = "kbuild/durations"
T = TypeVar("T")

# Rough CPU cost of a kconfig relative to tinyconfig, for builds never seen.
_KCONFIG_FACTORS = (
    (re.compile(r"^(tiny|allno)config$"), 1.0),
    (re.compile(r"^all(mod|yes)config$"), 40.0),
)
_DEFAULT_FACTOR = 8.0  # defconfig, *_defconfig, files and URLs
# Rough cost of each target relative to the kernel image.
_TARGET_COSTS = {"kernel": 1.0, "modules": 0.6, "debugkernel": 0.1, "dtbs": 0.2}
_OTHER_TARGET = 0.05
TINY_KERNEL_SECONDS = 150.0  # a tinyconfig kernel on one core of a small machine
# What one running build may need at its peak (linking vmlinux, modpost of a
# large config); bounds -n auto by the machine's memory.
MEMORY_PER_BUILD = 2 << 30


def estimate(kconfig: str, targets: Iterable[str]) -> float:
    """Seconds a build of *kconfig* with *targets* may take, from nothing but names."""
    factor = next((f for rx, f in _KCONFIG_FACTORS if rx.match(kconfig)), _DEFAULT_FACTOR)
    cost = sum(_TARGET_COSTS.get(t, _OTHER_TARGET) for t in targets)
    return round(TINY_KERNEL_SECONDS * factor * cost, 1)


def weight(
    build_id: str, kconfig: str, targets: Iterable[str], remembered: Mapping[str, float]
) -> float:
    """Remembered duration of *build_id* if known, else the estimate."""
    seen = remembered.get(build_id)
    return (
        float(seen) if isinstance(seen, (int, float)) and seen > 0 else estimate(kconfig, targets)
    )


def scope_weights(
    builds: Iterable[tuple[str, BuildSpec]], remembered: Mapping[str, float]
) -> dict[str, float]:
    """Expected seconds of every build, keyed by its xdist scope
    (``<matrix relative to rootpath>::<build id>``, the build's node id)."""
    return {scope: weight(scope, spec.kconfig, spec.targets, remembered) for scope, spec in builds}


def longest_first(weights: Mapping[str, float]) -> list[str]:
    """Build ids by decreasing weight; ties by id, so every machine agrees."""
    return sorted(weights, key=lambda b: (-weights[b], b))


def queue_order(
    scopes: Iterable[str], weights: Mapping[str, float], first: Collection[str] = ()
) -> list[str]:
    """The order in which xdist workers are handed *scopes* (builds): those
    in *first* (the builds that failed last time, with --ff) before all
    others, each part heaviest first, ties by scope. A scope *weights* does
    not know (a plain test's) weighs nothing."""
    ordered = longest_first({s: weights.get(s, 0.0) for s in scopes})
    ordered.sort(key=lambda s: s not in first)  # stable: keeps heaviest first
    return ordered


def keep_builds_together(
    items: Sequence[T], build_of: Callable[[T], str | None], position: Callable[[T], int]
) -> list[T]:
    """*items* with the targets of each build made contiguous, in dependency order.

    A build takes the place of its first item (so an order chosen by another
    plugin, such as --ff putting failed items first, still orders the builds);
    *position* ranks the targets within a build; items of no build
    (``build_of`` is None) keep their place.
    """
    groups: dict[object, list[T]] = {}
    for i, item in enumerate(items):
        build = build_of(item)
        groups.setdefault(i if build is None else build, []).append(item)
    return [item for group in groups.values() for item in sorted(group, key=position)]


def auto_workers(cpus: int, memory: int, *, shared_budget: bool) -> int:
    """Builds to run at once for ``-n auto`` on *cpus* CPUs and *memory* bytes.

    Without a shared jobserver each build runs ``make -j`` with its share of
    the CPUs, so one build per two CPUs: a build's serial phases (Kconfig,
    linking) leave its second CPU to the other builds without
    oversubscribing the machine. With the shared budget the jobserver alone
    caps the jobs, so extra builds cost no CPU: at least two, so that a
    build's serial phase seldom leaves the machine idle, and one per four
    CPUs on big machines, whose builds spend a larger share of their time
    in those phases. Either way no more builds than memory holds (*memory*
    0: unknown, no bound).
    """
    cpus = max(1, cpus)
    wanted = max(2, cpus // 4) if shared_budget else cpus // 2
    held = memory // MEMORY_PER_BUILD if memory > 0 else cpus
    return max(1, min(wanted, cpus, held))


def physical_memory() -> int:
    """Bytes of RAM of this machine (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0
