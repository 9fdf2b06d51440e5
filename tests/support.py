"""Helpers shared by the tests (import as ``from tests.support import ...``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKELINUX = ROOT / "fakelinux"
DEBIAN_TREE = Path("/usr/src/linux-source-6.1")


def require_tools(*tools: str) -> None:
    """Skip (fail under CI) when a tool the test runs is not on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        msg = f"not on PATH: {', '.join(missing)} (run .ci/setup)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
