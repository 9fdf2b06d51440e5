"""Hook specifications of pytest-kbuild (``pytest_kbuild_*``), each named for
the moment it fires."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .build.build import Build
    from .build.result import BuildResult
    from .plugin.items import BuildItem
    from .results import TargetResult
    from .runtime.base import Runtime


@pytest.hookspec(firstresult=True)
def pytest_kbuild_make_runtime(config: pytest.Config, name: str) -> Runtime | None:
    """Return the runtime called *name*, or None to let another plugin answer.

    The built-in implementation (trylast) knows ``local`` (alias ``null``),
    ``podman`` and ``docker``. A name some plugin answers is accepted
    everywhere a runtime is named: a matrix's ``runtime:`` and
    ``--kbuild-runtime``. Called once to learn that a name exists, then once
    per build; keep construction cheap (``Runtime.bind`` does the work).
    """


@pytest.hookspec
def pytest_kbuild_build_started(config: pytest.Config, build: Build) -> None:
    """Called on the worker when a build's first target is about to run
    (after ``build.prepare()``)."""


@pytest.hookspec
def pytest_kbuild_target_finished(item: BuildItem, result: TargetResult) -> None:
    """Called on the worker after each target ran (or was skipped), before its
    result is reported."""


@pytest.hookspec
def pytest_kbuild_build_finished(config: pytest.Config, build: Build, result: BuildResult) -> None:
    """Called on the worker once a build's last target is done and its
    metadata.json is final (at the build's teardown), before its results
    folder is sent home by a remote worker."""
