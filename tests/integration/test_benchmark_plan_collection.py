"""benchmarks/plan_collection.py, one round of the large plan and its matrix."""

from __future__ import annotations

import re

from benchmarks import plan_collection


def test_the_matrix_has_the_plans_builds(tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text(plan_collection.plan_text(2))
    same = tmp_path / "matrix.yaml"
    same.write_text(plan_collection.matrix_text(plan))
    planned = plan_collection.matrix.load(plan, check=False).builds
    assert len(planned) == 210
    assert len(plan_collection.matrix.load(same, check=False).builds) == 210 + 1


def test_one_round(capsys):
    plan_collection.main(["--runs", "1", "--repeat", "1"])
    out = capsys.readouterr().out
    assert re.search(r"^ +plan +105 +\d+ +[\d.]+ +[\d.]+$", out, re.M), out
    assert re.search(r"^ +matrix +105 +\d+ +[\d.]+ +[\d.]+$", out, re.M), out
    assert re.search(r"plan / matrix: wall [\d.]+, load [\d.]+$", out, re.M), out
