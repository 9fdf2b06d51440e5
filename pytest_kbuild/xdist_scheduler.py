"""pytest-xdist scheduling for build matrices: every target of one build on
one worker, in dependency order, and the longest builds first."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Mapping
from typing import Any

from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

from .scheduling import longest_first


class BuildScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """LoadScope grouping by build (``m.yaml::<build id>``: the node id up to
    the last ``::``), handing out the heaviest builds first.

    *weights* maps a scope to its expected seconds; unknown scopes (plain
    tests in the same run) weigh nothing and keep collection order. Scopes
    in *first* (the builds that failed last time, with --ff) go before all
    others, heaviest first among themselves.
    """

    workqueue: OrderedDict[str, dict[str, bool]]

    def __init__(
        self, config: Any, log: Any, weights: Mapping[str, float], first: Collection[str] = ()
    ) -> None:
        super().__init__(config, log)
        self._weights = dict(weights)
        self._first = frozenset(first)
        self._ordered = False

    def _assign_work_unit(self, node: Any) -> None:
        if not self._ordered and self.workqueue:
            # The queue is complete once the first unit is handed out:
            # reorder it once, heaviest first, ties by scope name.
            scopes = longest_first({s: self._weights.get(s, 0.0) for s in self.workqueue})
            scopes.sort(key=lambda s: s not in self._first)  # stable: keeps heaviest first
            rank = {s: i for i, s in enumerate(scopes)}
            self.workqueue = OrderedDict(sorted(self.workqueue.items(), key=lambda kv: rank[kv[0]]))
            self._ordered = True
        super()._assign_work_unit(node)
