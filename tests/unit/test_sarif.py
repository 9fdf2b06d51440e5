"""sarif.py: the run's grouped diagnostics as SARIF 2.1.0 for GitHub code
scanning, checked against the OASIS schema (tests/support.sarif_problems)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_kbuild.diagnostics import Tool, parse
from pytest_kbuild.diagnostics.baseline import Baseline, BaselineBuild, BaselineTarget
from pytest_kbuild.report import grouping, sarif
from tests.support import sarif_problems

GCC = "{t}/kernel/fork.c:123:9: warning: unused variable 'x' [-Wunused-variable]\n"
CLANG = (
    "{t}/drivers/misc/x.c:10:20: warning: format specifies type 'int' but the argument "
    "has type 'long' [-Wformat]\n"
)
ERROR = "{t}/kernel/exit.c:7:3: error: 'y' undeclared\n"
OTHERS = """ERROR: modpost: "foo" [drivers/misc/bar.ko] undefined!
ld: kernel/fork.c:(.text+0x1c): undefined reference to `bar'
/build/arch/arm64/boot/dts/foo/bar.dtb: uart@0: 'clocks' is a required property
	From schema: {t}/Documentation/devicetree/bindings/serial/x.yaml
WARNING: unmet direct dependencies detected for FOO
  Depends on [n]: BAR [=n]
make[2]: warning: jobserver unavailable: using -j1.  Add '+' to parent make rule.
"""
SOURCES = ("kernel/fork.c", "kernel/exit.c", "drivers/misc/x.c", "Makefile")


@pytest.fixture
def tree(tmp_path):
    """A kernel tree in linux/ of a repository (GitHub's workspace)."""
    linux = tmp_path / "repo" / "linux"
    for name in SOURCES:
        (linux / name).parent.mkdir(parents=True, exist_ok=True)
        (linux / name).write_text("\n" * 200)
    return linux


def records(text, tree):
    return [d.to_json() for d in parse(text.format(t=tree), tree=str(tree), build_dir="/build")]


def builds_of(logs, tree):
    """build id -> a metadata.json with one kernel target that printed *logs[id]*."""
    return {
        b: {"tree": {"path": str(tree)}, "targets": {"kernel": {"diagnostics": records(t, tree)}}}
        for b, t in logs.items()
    }


def sarif_of(builds, repository, absent=()):
    trees = {b: m["tree"]["path"] for b, m in builds.items()}
    return sarif.log(grouping.group(builds), trees, repository, absent)


def by_rule(doc):
    return {r["ruleId"]: r for r in doc["runs"][0]["results"]}


def test_no_diagnostics_is_a_valid_log_without_results(tree):
    doc = sarif_of(builds_of({"x86_64-gcc-defconfig": ""}, tree), tree.parent)
    assert sarif_problems(doc) == []
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    (run,) = doc["runs"]
    assert run["tool"]["driver"]["name"] == "pytest-kbuild"
    assert run["tool"]["driver"]["rules"] == [] and run["results"] == []


def test_errors_and_warnings_of_several_tools_one_rule_per_tool_and_flag(tree):
    builds = builds_of(
        {
            "arm64-gcc-defconfig": GCC + GCC + ERROR + OTHERS,
            "x86_64-gcc-defconfig": GCC,
            "x86_64-clang-defconfig": CLANG,
        },
        tree,
    )
    doc = sarif_of(builds, tree.parent)
    assert sarif_problems(doc) == []
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert sorted(ids) == sorted(
        {
            "compiler/-Wunused-variable",
            "compiler/-Wformat",
            "compiler",
            "modpost",
            "linker",
            "dt-schema",
            "kconfig",
            "make",
        }
    )
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
    results = by_rule(doc)
    gcc = results["compiler/-Wunused-variable"]
    assert gcc["level"] == "warning" and gcc["occurrenceCount"] == 3
    assert gcc["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "linux/kernel/fork.c", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 123, "startColumn": 9},
            }
        }
    ]
    assert gcc["properties"]["builds"] == ["arm64-gcc-defconfig", "x86_64-gcc-defconfig"]
    assert gcc["message"]["text"] == (
        "warning: unused variable 'x' [-Wunused-variable] "
        "(2 builds: arm64-gcc-defconfig, x86_64-gcc-defconfig)"
    )
    clang = results["compiler/-Wformat"]
    assert clang["properties"]["builds"] == ["x86_64-clang-defconfig"]
    assert clang["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "linux/drivers/misc/x.c"
    )
    error = results["compiler"]
    assert error["level"] == "error" and error["message"]["text"].startswith("error: 'y' ")
    assert results["make"]["level"] == "note"  # make's jobserver: how the build ran
    # Not a file of the tree: at the tree's Makefile, and the message says where.
    modpost = results["modpost"]
    assert modpost["level"] == "error"
    assert modpost["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "linux/Makefile", "uriBaseId": "%SRCROOT%"}
            }
        }
    ]
    assert modpost["message"]["text"].startswith("error: drivers/misc/bar.ko: ")
    dtb = results["dt-schema"]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert dtb["uri"] == "linux/Makefile"
    assert "baselineState" not in json.dumps(doc)  # no baseline, no state


def test_new_unchanged_and_absent_against_a_baseline(tree):
    builds = builds_of({"arm64-gcc-defconfig": GCC + ERROR}, tree)
    then = records(GCC + CLANG, tree)  # the baseline had the warning, and one fixed since
    kernel = BaselineTarget("PASS", {d["key"]: d for d in then})
    base = Baseline(tree / "base", {"arm64-gcc-defconfig": BaselineBuild({"kernel": kernel})})
    target = builds["arm64-gcc-defconfig"]["targets"]["kernel"]
    target["baseline"] = base.compare("arm64-gcc-defconfig", "kernel", target["diagnostics"])
    absent = grouping.fixed(builds)
    assert [g["flag"] for g in absent] == ["-Wformat"]
    doc = sarif_of(builds, tree.parent, absent)
    assert sarif_problems(doc) == []
    results = by_rule(doc)
    assert results["compiler"]["baselineState"] == "new"
    assert results["compiler"]["message"]["text"].startswith("new error: ")
    assert results["compiler"]["properties"]["newIn"] == ["arm64-gcc-defconfig"]
    assert results["compiler/-Wunused-variable"]["baselineState"] == "unchanged"
    gone = results["compiler/-Wformat"]
    assert gone["baselineState"] == "absent" and gone["message"]["text"].startswith("fixed ")
    assert gone["properties"]["builds"] == ["arm64-gcc-defconfig"]
    # Without the absent ones (GitHub would show them as alerts) the others keep their state.
    assert {r["baselineState"] for r in sarif_of(builds, tree.parent)["runs"][0]["results"]} == {
        "new",
        "unchanged",
    }


def test_fingerprints_are_stable_across_runs_trees_and_line_shifts(tmp_path, tree):
    first = sarif_of(builds_of({"b": GCC + ERROR}, tree), tree.parent)
    again = sarif_of(builds_of({"b": GCC + ERROR}, tree), tree.parent)
    assert json.dumps(first) == json.dumps(again)
    elsewhere = tmp_path / "ci" / "linux"
    for name in SOURCES:
        (elsewhere / name).parent.mkdir(parents=True, exist_ok=True)
        (elsewhere / name).write_text("")
    moved = (GCC + ERROR).replace(":123:", ":140:").replace(":7:", ":9:")
    later = sarif_of(builds_of({"b": moved}, elsewhere), elsewhere.parent)
    prints = [r["partialFingerprints"] for r in first["runs"][0]["results"]]
    assert prints == [r["partialFingerprints"] for r in later["runs"][0]["results"]]
    assert len({json.dumps(p) for p in prints}) == 2  # distinct diagnostics, distinct prints
    assert by_rule(later)["compiler"]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 9,
        "startColumn": 3,
    }


def test_a_tree_outside_the_repository_gives_paths_relative_to_the_tree(tmp_path, tree):
    doc = sarif_of(builds_of({"b": GCC + OTHERS}, tree), tmp_path / "elsewhere")
    assert sarif_problems(doc) == []
    results = by_rule(doc)
    where = results["compiler/-Wunused-variable"]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"] == {"uri": "kernel/fork.c", "uriBaseId": "KERNEL_TREE"}
    kconfig = results["kconfig"]["locations"][0]["physicalLocation"]
    assert kconfig == {"artifactLocation": {"uri": "Makefile", "uriBaseId": "KERNEL_TREE"}}


def test_results_beyond_githubs_limit_are_counted_in_a_notification(tree, monkeypatch):
    monkeypatch.setattr(sarif, "MAX_RESULTS", 2)
    doc = sarif_of(builds_of({"b": GCC + CLANG + ERROR}, tree), tree.parent)
    assert sarif_problems(doc) == []
    (run,) = doc["runs"]
    assert len(run["results"]) == 2 and run["results"][0]["level"] == "error"  # errors first
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"].startswith("1 more diagnostics than GitHub takes")


def test_every_tool_has_a_rule_description():
    assert set(sarif.TOOLS) == {t.value for t in Tool}


def test_the_schema_check_rejects_what_github_would_reject(tree):
    doc = sarif_of(builds_of({"b": GCC}, tree), tree.parent)
    bad = json.loads(json.dumps(doc))
    bad["runs"][0]["results"][0]["level"] = "fatal"
    assert any("fatal" in p for p in sarif_problems(bad))
    bad = json.loads(json.dumps(doc))
    bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert sarif_problems(bad)
    bad = json.loads(json.dumps(doc))
    where = bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    where["artifactLocation"]["uri"] = f"file://{tree}/kernel/fork.c"
    assert sarif_problems(bad) == [
        "runs/0/results/0: " + repr(where["artifactLocation"]["uri"]) + " is not relative"
    ]


def test_write(tmp_path, tree):
    out = sarif.write(tmp_path / "out" / "kbuild.sarif", [], {}, tree.parent)
    assert sarif_problems(json.loads(out.read_text())) == []


def test_makes_error_is_a_note_when_another_tools_error_says_why(tree):
    make = "make[1]: *** [scripts/Makefile.build:243: kernel/exit.o] Error 1\n"
    alone = by_rule(sarif_of(builds_of({"b": make}, tree), tree.parent))
    assert alone["make"]["level"] == "error"  # nothing else says why the build failed
    both = sarif_of(builds_of({"b": ERROR + make}, tree), tree.parent)
    assert sarif_problems(both) == []
    assert {r["ruleId"]: r["level"] for r in both["runs"][0]["results"]} == {
        "compiler": "error",
        "make": "note",
    }


def test_the_repository_is_githubs_workspace_else_the_current_directory(tmp_path):
    assert sarif.workspace({"GITHUB_WORKSPACE": "/w/linux"}, tmp_path) == Path("/w/linux")
    assert sarif.workspace({}, tmp_path) == tmp_path


def results_dir(tmp_path, builds):
    """A results dir as a run leaves it: results.json and each build's metadata.json."""
    res = tmp_path / "res"
    for b, meta in builds.items():
        (res / "m" / b).mkdir(parents=True)
        (res / "m" / b / "metadata.json").write_text(json.dumps({"build_id": b, **meta}))
    (res / "results.json").write_text(json.dumps({"schema": 2, "builds": {}}))
    return res


def test_the_subcommand_writes_the_results_dirs_diagnostics(tmp_path, tree, capsys):
    from pytest_kbuild.cli.commands import EXIT_OK, main

    builds = builds_of({"arm64-gcc-defconfig": GCC + ERROR, "x86_64-gcc-defconfig": GCC}, tree)
    res = results_dir(tmp_path, builds)
    assert main(["sarif", str(res), "--workspace", str(tree.parent)]) == EXIT_OK
    assert capsys.readouterr().out == f"I: SARIF of {res}: {res / 'kbuild.sarif'} (2 results)\n"
    doc = json.loads((res / "kbuild.sarif").read_text())
    assert sarif_problems(doc) == []
    assert doc == sarif_of(builds, tree.parent)  # as the run that wrote the dir writes it
    out = tmp_path / "code-scanning.sarif"
    assert main(["sarif", str(res), "-o", str(out), "--workspace", str(tree)]) == EXIT_OK
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(out.read_text())["runs"][0]["results"]
    ]
    assert sorted(uris) == ["kernel/exit.c", "kernel/fork.c"]


def test_the_subcommand_adds_the_absent_ones_only_when_asked(tmp_path, tree):
    from pytest_kbuild.cli.commands import EXIT_OK, main

    builds = builds_of({"b": ""}, tree)
    (then,) = records(GCC, tree)  # as baseline.compare keeps a fixed one:
    fixed = {k: then[k] for k in ("kind", "tool", "file", "line", "message", "flag", "key")}
    builds["b"]["targets"]["kernel"]["baseline"] = {"fixed": 1, "fixed_diagnostics": [fixed]}
    res = results_dir(tmp_path, builds)
    assert main(["sarif", str(res), "--workspace", str(tree.parent)]) == EXIT_OK
    assert json.loads((res / "kbuild.sarif").read_text())["runs"][0]["results"] == []
    assert main(["sarif", str(res), "--workspace", str(tree.parent), "--absent"]) == EXIT_OK
    doc = json.loads((res / "kbuild.sarif").read_text())
    assert sarif_problems(doc) == []
    (result,) = doc["runs"][0]["results"]
    assert result["baselineState"] == "absent"
    assert result["ruleId"] == "compiler/-Wunused-variable"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("missing", "is not a directory"),
        ("empty", "has no results.json and no build folders"),
        ("summary only", "has a results.json but no <matrix>/<build id>/metadata.json"),
    ],
)
def test_the_subcommand_on_what_is_not_a_results_dir(tmp_path, capsys, given, said):
    from pytest_kbuild.cli.commands import EXIT_INPUT, main

    res = tmp_path / "res"
    if given != "missing":
        res.mkdir()
    if given == "summary only":
        (res / "results.json").write_text(json.dumps({"schema": 2, "builds": {}}))
    assert main(["sarif", str(res)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"E: {str(res)!r} {said}; accepted: a results dir"), err
    assert "Traceback" not in err and not (res / "kbuild.sarif").exists()


def test_the_subcommand_on_an_output_it_cannot_write(tmp_path, tree, capsys):
    from pytest_kbuild.cli.commands import EXIT_INPUT, main

    res = results_dir(tmp_path, builds_of({"b": GCC}, tree))
    (tmp_path / "a-file").write_text("")
    bad = tmp_path / "a-file" / "kbuild.sarif"  # its folder cannot be made
    assert main(["sarif", str(res), "-o", str(bad)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"E: sarif {bad}: ") and "Traceback" not in err
    assert len(err.splitlines()) == 1
