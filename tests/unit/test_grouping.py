"""grouping.py: identical diagnostics over all builds of a run, once each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_kbuild.diagnostics import parse
from pytest_kbuild.errors import NotAResultsDir
from pytest_kbuild.report import grouping

WARN = "kernel/fork.c:123:9: warning: unused variable 'x' [-Wunused-variable]\n"
ERR = "kernel/exit.c:7:3: error: 'y' undeclared\n"


def build(targets):
    return {
        "targets": {
            t: {"diagnostics": [d.to_json() for d in parse(text)]} for t, text in targets.items()
        }
    }


def test_identical_diagnostics_are_grouped_errors_first_then_most_builds():
    other = "mm/slab.c:5:1: warning: unused variable 'z' [-Wunused-variable]\n"
    builds = {
        "b-arm64": build({"kernel": WARN + WARN + other}),
        "a-x86": build({"config": WARN, "kernel": ERR}),
    }
    groups = grouping.group(builds)
    assert [g["file"] for g in groups] == ["kernel/exit.c", "kernel/fork.c", "mm/slab.c"]
    fork = groups[1]
    assert fork["builds"] == ["a-x86", "b-arm64"] and fork["targets"] == ["config", "kernel"]
    assert fork["count"] == 3 and fork["flag"] == "-Wunused-variable" and fork["line"] == 123
    assert grouping.line(fork) == (
        "kernel/fork.c:123: warning: unused variable 'x' [-Wunused-variable]"
        " - 2 builds: a-x86, b-arm64"
    )
    assert len(grouping.line(fork, width=40)) == 40


def test_lines_are_bounded():
    builds = {"b": build({"kernel": "".join(f"f{i}.c:1:1: error: e{i}\n" for i in range(15))})}
    out = grouping.lines(grouping.group(builds))
    assert len(out) == grouping.MAX_LINES and out[-1] == "... and 6 more in diagnostics.json"


def test_read_builds_and_write(tmp_path):
    (tmp_path / "m" / "b1").mkdir(parents=True)
    (tmp_path / "m" / "b1" / "metadata.json").write_text(
        json.dumps({"build_id": "b1", **build({"kernel": WARN})})
    )
    groups = grouping.summarise(tmp_path)
    assert groups[0]["builds"] == ["b1"]
    path = grouping.write(tmp_path, groups)
    assert json.loads(path.read_text())["diagnostics"] == groups


@pytest.mark.parametrize("make", [None, "empty"])
def test_not_a_results_dir(tmp_path, make):
    path = tmp_path / "nope"
    if make:
        path.mkdir()
    with pytest.raises(NotAResultsDir, match="nope.*; accepted: a results dir") as exc:
        grouping.read_builds(path)
    assert exc.value.path == str(path)


def test_new_against_a_baseline_sorts_first_and_is_marked():
    builds = {"a": build({"kernel": WARN + ERR}), "b": build({"kernel": WARN})}
    for b, news in (("a", [True, False]), ("b", [False])):
        for d, new in zip(builds[b]["targets"]["kernel"]["diagnostics"], news, strict=True):
            d["new"] = new
    groups = grouping.group(builds)
    assert [g["file"] for g in groups] == ["kernel/fork.c", "kernel/exit.c"]
    assert groups[0]["new"] is True and groups[0]["new_in"] == ["a"]
    assert grouping.line(groups[0]).startswith(">> kernel/fork.c:123: warning:")
    assert grouping.line(groups[1]).startswith("   kernel/exit.c:7: error:")
    # no baseline: no marks, no padding
    assert grouping.line(grouping.group({"a": build({"kernel": ERR})})[0]).startswith("kernel/")


def test_fixed_diagnostics_of_the_baseline_once_each_with_their_builds():
    from pytest_kbuild.diagnostics.baseline import Baseline, BaselineBuild, BaselineTarget

    then = build({"kernel": WARN + ERR})["targets"]["kernel"]["diagnostics"]
    keys = {d["key"]: d for d in then}
    base = Baseline(
        Path("base"),
        {b: BaselineBuild({"kernel": BaselineTarget("PASS", keys)}) for b in ("a", "b")},
    )
    builds = {"a": build({"kernel": WARN}), "b": build({"kernel": ""})}
    for b, meta in builds.items():
        kernel = meta["targets"]["kernel"]
        kernel["baseline"] = base.compare(b, "kernel", kernel["diagnostics"])
    fixed = grouping.fixed(builds)
    assert [(g["file"], g["builds"], g["targets"]) for g in fixed] == [
        ("kernel/exit.c", ["a", "b"], ["kernel"]),
        ("kernel/fork.c", ["b"], ["kernel"]),
    ]
    assert fixed[0]["kind"] == "error" and fixed[0]["line"] == 7 and fixed[0]["column"] is None
    assert grouping.fixed({"a": build({"kernel": WARN})}) == []  # no baseline, nothing fixed
