"""SIGTERM during a pytest run (signals.py): it interrupts collection and
the builds as Ctrl-C does; after the builds, while pytest and xdist write
results and stop workers, it is only noted, and the run then ends with
pytest's "interrupted" status and a line that says why."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..run import signals


class SigtermHooks:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Iterator[None]:
        try:
            yield
        finally:
            signals.raising(False)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if signals.received() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.INTERRUPTED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if signals.received():
            terminalreporter.write_line(
                "kbuild: terminated by SIGTERM; the results of what ran are kept", yellow=True
            )
