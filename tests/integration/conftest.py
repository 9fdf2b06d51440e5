"""Fixtures the real-tree test modules share."""

from __future__ import annotations

import pytest

from tests import fresh_machine as fresh


@pytest.fixture(scope="session")
def fresh_machine(tmp_path_factory: pytest.TempPathFactory) -> fresh.FreshRun:
    """The README's main job, run once on a fresh Debian 12 (tests/fresh_machine.py)."""
    run = fresh.run(tmp_path_factory.mktemp("fresh-machine"))
    print(run.timing)  # shown with -s or -rP: CI's time budget is watched here
    return run
