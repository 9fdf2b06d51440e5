"""--lf and --ff with builds: a build's targets stay together and in
dependency order, and targets a failed dependency skipped count as failed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..run.scheduling import keep_builds_together
from .items import BuildItem

LASTFAILED = "cache/lastfailed"  # pytest's cacheprovider keeps --lf's node ids here


class RerunHooks:
    """--lf and --ff with builds: whole builds in dependency order, and the
    targets a failed dependency skipped count as failed for the next --lf."""

    def __init__(self) -> None:
        self.blocked: set[str] = set()

    # Registered in pytest_configure, after the cacheprovider's --lf/--ff
    # plugin: as the outer tryfirst wrapper, this runs after its reordering.
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Iterator[None]:
        yield
        # --ff puts failed targets before their build's config; a build whose
        # items are apart is torn down (its build directory removed) between them.
        items[:] = keep_builds_together(
            items,
            lambda i: i.parent.nodeid if isinstance(i, BuildItem) else None,
            lambda i: i.parent.spec.targets.index(i.target.name) if isinstance(i, BuildItem) else 0,
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and "blocked_by" in dict(report.user_properties):
            self.blocked.add(report.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # trylast: after the cacheprovider saved this run's failures, which
        # forgets skipped items. A target skipped because its dependency
        # failed has not passed: the next --lf must build it too.
        cache = getattr(session.config, "cache", None)
        if cache is None or not self.blocked or hasattr(session.config, "workerinput"):
            return
        cache.set(LASTFAILED, {**cache.get(LASTFAILED, {}), **dict.fromkeys(self.blocked, True)})
