"""The minimum versions pyproject.toml declares are the ones `tox -e min`
pins in tests/requirements-min.txt (and installs)."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

MIN_FILE = Path(__file__).parents[1] / "requirements-min.txt"


def pins() -> dict[str, Version]:
    out = {}
    for line in MIN_FILE.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"{MIN_FILE.name}: {line!r} is not name==version"
            out[canonicalize_name(name)] = Version(version)
    return out


def declared() -> list[Requirement]:
    """pytest-kbuild's requirements, from its installed metadata (pyproject.toml)."""
    return [Requirement(r) for r in importlib.metadata.requires("pytest-kbuild") or []]


def minimum(req: Requirement) -> Version | None:
    lower = [Version(s.version) for s in req.specifier if s.operator == ">="]
    return lower[0] if len(lower) == 1 else None


def test_every_runtime_and_xdist_requirement_has_its_minimum_pinned():
    runtime = [r for r in declared() if r.marker is None or r.marker.evaluate({"extra": "xdist"})]
    assert {canonicalize_name(r.name) for r in runtime} == set(pins())
    for req in runtime:
        assert minimum(req) == pins()[canonicalize_name(req.name)], str(req)


def test_every_mention_of_a_pinned_package_declares_the_same_minimum():
    # pytest-xdist is in both the xdist and the dev extras.
    for req in declared():
        name = canonicalize_name(req.name)
        if name in pins():
            assert minimum(req) == pins()[name], str(req)


@pytest.mark.skipif(os.environ.get("TOX_ENV_NAME") != "min", reason="only in tox -e min")
def test_the_min_env_runs_the_pinned_versions():
    installed = {name: Version(importlib.metadata.version(name)) for name in pins()}
    assert installed == pins()
