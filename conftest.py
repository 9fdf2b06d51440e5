"""Fixtures shared by the unit and integration tests."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import DEBIAN_TREE, FAKELINUX


def _set_writable(top: Path, writable: bool) -> None:
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [*dirnames, *filenames, ""]:
            p = Path(dirpath, name)
            mode = p.stat().st_mode
            bits = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
            p.chmod(mode | stat.S_IWUSR if writable else mode & ~bits)


@pytest.fixture(autouse=True)
def _no_ci_shard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the tests whole even inside a sharded CI job (GitLab parallel:, a
    Kubernetes indexed Job): pytester runs inherit the environment."""
    for name in ("CI_NODE_INDEX", "JOB_COMPLETION_INDEX", "PYTEST_KBUILD_SHARD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fakelinux(tmp_path: Path) -> Iterator[Path]:
    """A read-only copy of fakelinux/: builds must write only under O=."""
    tree = tmp_path / "fakelinux"
    shutil.copytree(FAKELINUX, tree)
    _set_writable(tree, False)
    yield tree
    _set_writable(tree, True)


@pytest.fixture(scope="session")
def linux_tree() -> Path:
    """Debian's linux-source-6.1 tree (PYTEST_KBUILD_LINUX_TREE or /usr/src).

    Skips where it is not installed; under CI (CI=true) its absence fails,
    so a CI machine never passes by skipping the real builds.
    """
    tree = Path(os.environ.get("PYTEST_KBUILD_LINUX_TREE", DEBIAN_TREE))
    if (tree / "Makefile").is_file() and (tree / "Kbuild").is_file():
        return tree
    msg = f"no Linux tree at {tree} (run .ci/setup or set PYTEST_KBUILD_LINUX_TREE)"
    if os.environ.get("CI") == "true":
        pytest.fail(msg)
    pytest.skip(msg)


REAL_TREE_GROUP = "real-tree"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The README's test command runs on xdist workers with --dist loadgroup:
    every realkernel test goes to one worker, in collection order, so the
    module fixtures that share one real build each (the smoke run, the boots,
    the fresh machine) run once and two real builds never compete for the
    CPUs; the other tests spread over the other workers meanwhile. tryfirst:
    before xdist's worker reads the groups."""
    for item in items:
        if item.get_closest_marker("realkernel"):
            item.add_marker(pytest.mark.xdist_group(REAL_TREE_GROUP))
