from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fakes import FakeRuntime, make_tree

from pytest_kbuild import definitions


@pytest.fixture
def kernel_tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "linux")


@pytest.fixture
def fake_runtime() -> FakeRuntime:
    return FakeRuntime()


@pytest.fixture
def write_matrix(tmp_path: Path):
    """write_matrix(text, name="matrix.yaml") -> path of the dedented file."""

    def write(text: str, name: str = "matrix.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    return write


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """An empty data/ directory in place of the package's.

    definitions has no public way to add a data directory or to drop its
    cache, so this clears the private index cache around the test.
    """
    for kind in definitions.KINDS:
        (tmp_path / kind).mkdir()
    definitions._index.cache_clear()
    monkeypatch.setattr(definitions, "DATA_DIR", tmp_path)
    yield tmp_path
    monkeypatch.undo()
    definitions._index.cache_clear()
