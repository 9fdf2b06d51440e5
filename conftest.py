"""Fixtures shared by the unit and integration tests."""

from __future__ import annotations

import os
import re
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
    Kubernetes indexed Job), and without a GitHub Actions step's annotations
    and summary: pytester runs inherit the environment."""
    for name in (
        "CI_NODE_INDEX",
        "JOB_COMPLETION_INDEX",
        "PYTEST_KBUILD_SHARD",
        "GITHUB_ACTIONS",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_WORKSPACE",
    ):
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


# A test module named test_*_real.py builds Debian's real kernel tree (or
# runs its real tools: QEMU, podman, docker, redis) as a user would.
REAL_TREE_MODULE = re.compile(r"(^|/)test_\w+_real\.py$")
REAL_TREE_GROUP = "real-tree"


def _real_tree_module(nodeid: str) -> bool:
    return REAL_TREE_MODULE.search(nodeid.split("::", 1)[0]) is not None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of a real-tree module are marked ``realkernel`` (so that
    ``-m "not realkernel"`` leaves them out)."""
    for item in items:
        if _real_tree_module(item.nodeid):
            item.add_marker(pytest.mark.realkernel)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """The README's test command runs on xdist workers with --dist loadgroup:
    every real-tree test goes to one worker, in collection order, so the
    fixtures that share one real build (the smoke run, the boots, the fresh
    machine) run once and two real builds never compete for the CPUs, while
    the other workers run the unit and fakelinux tests one by one. The group
    goes by module name, not by an xdist_group mark: xdist 3.8 marks a
    group in the node id, which pytest 9.2's node ids no longer take
    (pytest-xdist issue 1386), so such marks silently group nothing.
    Other --dist modes are xdist's (or pytest-kbuild's, for a matrix)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class RealTreeScheduling(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            if _real_tree_module(nodeid):
                return REAL_TREE_GROUP
            return str(super()._split_scope(nodeid))

    return RealTreeScheduling(config, log)
