"""benchmarks/large_matrix.py, tried on two small sizes (the figures take
1,000 builds and about ten minutes)."""

from __future__ import annotations

import re

from benchmarks import large_matrix
from pytest_kbuild import matrix


def test_the_matrix_has_as_many_builds_as_asked(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(large_matrix.matrix_text(12))
    builds = matrix.load(path, check=False).builds
    assert len(builds) == 12
    assert len({b.id for b in builds}) == 12
    assert {tuple(b.targets) for b in builds} == {tuple(large_matrix.TARGETS)}


def test_two_sizes_and_a_merge_print_the_table(capsys):
    large_matrix.main(["--sizes", "1", "3", "--workers", "0", "--shards", "2", "--no-browser"])
    out = capsys.readouterr().out
    assert re.search(r"^start \(a one-build run\): [\d.]+ s$", out, re.M), out
    number = r"-?[\d.]+"
    for size in (1, 3):
        row = rf"^{size}" + rf" \| {number}" * 8 + r" \| -$"
        assert re.search(row, out, re.M), out
    assert re.search(r"^merge of 2 shards \(3 builds\): [\d.]+ s$", out, re.M), out
