"""Hook specifications of pytest-kbuild (``pytest_kbuild_*``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .build import Build
    from .items import BuildItem
    from .results import TargetResult
    from .runtime.base import Runtime


@pytest.hookspec(firstresult=True)
def pytest_kbuild_make_runtime(config: pytest.Config, name: str) -> Runtime | None:
    """Return the runtime called *name*, or None to let another plugin answer.

    The built-in implementation (trylast) knows ``local`` (alias ``null``).
    """


@pytest.hookspec
def pytest_kbuild_build_started(config: pytest.Config, build: Build) -> None:
    """Called on the worker when a build's first target is about to run."""


@pytest.hookspec
def pytest_kbuild_build_finished(item: BuildItem, result: TargetResult) -> None:
    """Called on the worker after each target, before its result is reported."""
