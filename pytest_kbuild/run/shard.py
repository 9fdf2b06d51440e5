"""Sharding a matrix across CI machines: which builds this machine runs.

No pytest import. Every machine must compute the same split from the same
inputs, so nothing here looks at the clock, the machine or pytest's cache
(which differs between machines): builds are sorted by (-weight, scope) and
each goes to the currently lightest shard, ties to the lowest index. Weights
come from a durations file every machine has (--kbuild-durations), else
from the estimate in scheduling.py.
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import parsers
from ..errors import DurationsError, ShardError
from ..options import GITLAB_INDEX, GITLAB_TOTAL, K8S_INDEX, K8S_TOTAL
from ..parsers import SHARD_ACCEPTED, SHARD_SPEC
from ..parsers import Shard as Shard  # moved down to parsers.py
from ..results import Scope, build_id_of
from .scheduling import weight

if TYPE_CHECKING:
    from ..spec import BuildSpec


# GITLAB_INDEX: 1-based, set by GitLab's `parallel: N` (and parallel: matrix);
# K8S_INDEX: 0-based, set in every pod of a Kubernetes indexed Job; K8S_TOTAL:
# the Job's completions, which Kubernetes does not set (declared in options.py).
# The Shard value and its grammar live in parsers.py (options.py parses it).
ACCEPTED = SHARD_ACCEPTED
_SPEC = SHARD_SPEC
parse = parsers.shard


def from_environ(environ: Mapping[str, str]) -> Shard | None:
    """The shard a CI system gives this job, or None when it gives none.

    GitLab sets CI_NODE_TOTAL (1) on every job and CI_NODE_INDEX only on
    jobs of ``parallel:``. A Kubernetes indexed Job sets JOB_COMPLETION_INDEX
    (from 0) but no total: PYTEST_KBUILD_SHARD_TOTAL must say it, since
    running the whole matrix in every pod is never what was meant.
    """
    index = environ.get(GITLAB_INDEX, "")
    if index:
        where = f"{GITLAB_INDEX}/{GITLAB_TOTAL}"
        return parse(f"{index}/{environ.get(GITLAB_TOTAL, '')}", where)
    index = environ.get(K8S_INDEX, "")
    if not index:
        return None
    total = environ.get(K8S_TOTAL, "")
    if not total:
        raise ShardError(
            index,
            K8S_INDEX,
            f"is set (a Kubernetes indexed Job) but {K8S_TOTAL} is not",
            f"{K8S_TOTAL}=<the Job's completions>, or --kbuild-shard=1/1 for the whole matrix",
        )
    where = f"{K8S_INDEX}/{K8S_TOTAL}"
    accepted = f"0 <= {K8S_INDEX} < {K8S_TOTAL} (the index counts from 0)"
    m = _SPEC.match(f"{index}/{total}")
    if not m:
        raise ShardError(f"{index}/{total}", where, "is not two whole numbers", accepted)
    if not 0 <= int(m[1]) < int(m[2]):
        problem = f"has index {int(m[1])}, not below the total {int(m[2])}"
        raise ShardError(f"{index}/{total}", where, problem, accepted)
    return Shard(int(m[1]) + 1, int(m[2]))


def load_durations(path: Path, where: str) -> dict[str, float]:
    """Seconds per build scope (``<matrix rel path>::<build id>``) from *path*:
    a results.json of an earlier run (target durations summed per build), or
    a JSON object of scope -> seconds. *where* names the option it came from."""

    def bad(problem: str) -> DurationsError:
        return DurationsError(str(path), where, problem)

    try:
        data = json.loads(path.read_text())
    except OSError as err:
        raise bad(f"cannot be read: {err.strerror}") from None
    except ValueError as err:
        raise bad(f"is not JSON ({err})") from None
    if not isinstance(data, dict):
        raise bad("is not a JSON object")
    if "schema" in data and "builds" in data:
        return _from_results(data["builds"], bad)
    out = {}
    for scope, seconds in data.items():
        try:
            Scope.parse(scope)
        except ValueError:
            raise bad(f"key {scope!r} is not <matrix>::<build id>") from None
        if not _is_seconds(seconds):
            raise bad(f"{scope!r}: {seconds!r} is not a number of seconds")
        out[scope] = float(seconds)
    return out


def _from_results(builds: Any, bad: Callable[[str], DurationsError]) -> dict[str, float]:
    if not isinstance(builds, dict):
        raise bad("builds is not a JSON object")
    out = {}
    for build_id, build in builds.items():
        if not isinstance(build, dict) or not isinstance(build.get("targets"), dict):
            raise bad(f"builds.{build_id} has no targets object")
        total = 0.0
        for target, entry in build["targets"].items():
            seconds = _seconds(entry.get("duration", 0) if isinstance(entry, dict) else None)
            if seconds is None:
                raise bad(f"builds.{build_id}.targets.{target}.duration is not seconds")
            total += seconds
        out[str(Scope(build.get("matrix", ""), build_id_of(build_id, build)))] = total
    return out


def _seconds(value: Any) -> float | None:
    """*value* as seconds (results.json's schema 1 wrote them as strings), or None."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    return float(value) if _is_seconds(value) else None


def _is_seconds(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def weights(
    builds: Iterable[tuple[str, BuildSpec]], durations: Mapping[str, float]
) -> dict[str, float]:
    """Expected seconds per build scope: the durations file, else the estimate.
    A build the matrix skips (exclude) costs nothing."""
    return {
        scope: 0.0 if spec.skip_reason else weight(scope, spec.kconfig, spec.targets, durations)
        for scope, spec in builds
    }


def assign(weights: Mapping[str, float], total: int) -> list[list[str]]:
    """Build scopes per shard (index 0 is shard 1): heaviest first, each to
    the currently lightest shard, ties to the lowest index. The result does
    not depend on the order of *weights*."""
    shards: list[list[str]] = [[] for _ in range(total)]
    heap = [(0.0, i) for i in range(total)]
    for scope in sorted(weights, key=lambda s: (-weights[s], s)):
        load, i = heapq.heappop(heap)
        shards[i].append(scope)
        heapq.heappush(heap, (load + weights[scope], i))
    return shards


@dataclass(frozen=True)
class ShardPlan:
    """What one shard builds, out of how many builds in all."""

    shard: Shard
    scopes: frozenset[str]
    builds: int
    seconds: float

    def line(self) -> str:
        return (
            f"kbuild shard {self.shard}: {len(self.scopes)} of {self.builds} builds "
            f"(est. {format_seconds(self.seconds)})"
        )


def plan(weights: Mapping[str, float], shard: Shard) -> ShardPlan:
    """The builds of *shard* when *weights* are split into shard.total shards."""
    mine = assign(weights, shard.total)[shard.index - 1]
    return ShardPlan(shard, frozenset(mine), len(weights), sum(weights[s] for s in mine))


def format_seconds(seconds: float) -> str:
    """1h02m, 12m05s or 40s."""
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"
