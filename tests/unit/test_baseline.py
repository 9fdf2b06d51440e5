"""baseline.py: which diagnostics are new, fixed or unchanged against an
earlier run's results, and the clear errors for a bad baseline."""

from __future__ import annotations

import json

import pytest

from pytest_kbuild import diagnostics
from pytest_kbuild.build import record as metadata
from pytest_kbuild.diagnostics import baseline
from pytest_kbuild.errors import BadBaseline, KbuildUserError
from pytest_kbuild.results import SUMMARY_SCHEMA

UNUSED = "{tree}/kernel/fork.c:{line}:5: warning: unused variable 'x{n}' [-Wunused-variable]"
SHADOW = "{tree}/lib/a.c:7:1: warning: declaration shadows a local [-Wshadow]"
LD_ERR = "ld.lld: error: undefined symbol: foo"


def diags(tree, *lines, **fmt):
    text = "\n".join(ln.format(tree=tree, **fmt) for ln in lines) + "\n"
    return [d.to_json() for d in diagnostics.parse(text, tree=tree, build_dir="/b")]


def write_results(folder, builds, schema=metadata.SCHEMA):
    """A results dir as a run leaves it: results.json and per-build metadata."""
    for build_id, targets in builds.items():
        meta = folder / "m" / build_id / "metadata.json"
        meta.parent.mkdir(parents=True)
        entries = {
            name: {"status": status, "diagnostics": ds} for name, (status, ds) in targets.items()
        }
        meta.write_text(json.dumps({"schema": schema, "build_id": build_id, "targets": entries}))
    (folder / "results.json").write_text(json.dumps({"schema": SUMMARY_SCHEMA, "builds": {}}))
    return folder


@pytest.fixture
def base(tmp_path):
    old = diags("/old/linux", UNUSED, SHADOW, line=10, n=1)
    return baseline.load(
        write_results(tmp_path / "base", {"x86_64-gcc-defconfig": {"kernel": ("PASS", old)}})
    )


def test_moved_lines_and_other_tree_paths_are_unchanged_new_and_fixed_are_told(base):
    # The same unused variable ten lines down, with another number in its
    # name, in a tree checked out elsewhere: unchanged. The shadow warning
    # is gone (fixed) and an lld error is new.
    now = diags("/ci/work/linux", UNUSED, LD_ERR, line=20, n=2)
    entry = base.compare("x86_64-gcc-defconfig", "kernel", now)
    assert [d["new"] for d in now] == [False, True]
    assert entry["new"] == 1 and entry["new_errors"] == 1 and entry["new_warnings"] == 0
    assert entry["unchanged"] == 1 and entry["fixed"] == 1
    assert entry["absent"] is None and entry["status"] == "PASS"
    (fixed,) = entry["fixed_diagnostics"]
    assert fixed["file"] == "lib/a.c" and fixed["flag"] == "-Wshadow"


def test_absent_build_or_target_is_said_not_all_new(base):
    now = diags("/t", UNUSED, line=1, n=1)
    assert base.compare("arm64-gcc-defconfig", "kernel", now) == {
        "path": str(base.path),
        "absent": "build",
    }
    assert now[0]["new"] is False
    assert base.compare("x86_64-gcc-defconfig", "modules", now)["absent"] == "target"


def test_a_diagnostic_that_moved_to_another_target_is_neither_new_nor_fixed(tmp_path):
    shadow = diags("/t", SHADOW)
    base = baseline.load(
        write_results(tmp_path, {"b": {"kernel": ("PASS", shadow), "modules": ("PASS", [])}})
    )
    kernel = base.compare("b", "kernel", [])
    assert kernel["fixed"] == 1  # not seen yet in this run
    modules = base.compare("b", "modules", diags("/t", SHADOW), earlier=())
    assert modules["new"] == 0  # the baseline build had it, in another target
    later = base.compare("b", "kernel", [], earlier=[shadow[0]["key"]])
    assert later["fixed"] == 0  # an earlier target of this run has it


def test_results_json_is_accepted_for_its_dir(tmp_path, base):
    assert baseline.load(base.path / "results.json").builds.keys() == base.builds.keys()


def put(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "make, why",
    [
        (lambda p: p / "nowhere", "does not exist"),
        (lambda p: p, "has no <matrix>/<build id>/metadata.json inside"),
        (lambda p: put(p / "x.txt", ""), "is a file but not a results.json"),
        (lambda p: put(p / "results.json", "{").parent, "cannot be read as JSON"),
        (
            lambda p: put(p / "results.json", '{"schema": 99}').parent,
            "has schema 99; this version reads schema 1, 2",
        ),
        (
            lambda p: write_results(p, {"b": {"kernel": ("PASS", [])}}, schema=7),
            "has schema 7; this version reads schema 1",
        ),
    ],
    ids=["missing", "empty-dir", "other-file", "bad-json", "summary-schema", "metadata-schema"],
)
def test_a_bad_baseline_is_one_clear_error(tmp_path, make, why):
    path = make(tmp_path)
    with pytest.raises(BadBaseline) as err:
        baseline.load(path, "--kbuild-baseline")
    msg = str(err.value)
    assert msg.startswith("--kbuild-baseline: ") and why in msg
    assert "accepted: the results dir of an earlier run" in msg
    assert isinstance(err.value, KbuildUserError)


def test_marked():
    assert baseline.marked("a.c:1: warning: x", True) == ">> a.c:1: warning: x"
    assert baseline.marked("a.c:1: warning: x", False) == "   a.c:1: warning: x"
    assert baseline.marked("a.c:1: warning: x", None) == "a.c:1: warning: x"


def test_make_jobserver_warnings_are_about_the_run_never_new_nor_fixed(tmp_path):
    # Seen on Linux 6.1 tinyconfig: in the -n 2 run with a shared jobserver
    # (the baseline), not in the serial one after it.
    jobserver = [
        "make[3]: warning: -j0 forced in makefile: resetting jobserver mode.",
        "make[3]: warning: jobserver unavailable: using -j1.  Add '+' to parent make rule.",
    ]
    old = diags("/linux", *jobserver)
    assert [d["tool"] for d in old] == ["make", "make"]
    base = baseline.load(write_results(tmp_path / "b", {"x": {"kernel": ("PASS", old)}}))
    entry = base.compare("x", "kernel", [])
    assert (entry["fixed"], entry["new"]) == (0, 0)
    now = diags("/linux", jobserver[1])
    base2 = baseline.load(write_results(tmp_path / "c", {"x": {"kernel": ("PASS", [])}}))
    assert base2.compare("x", "kernel", now)["new"] == 0 and now[0]["new"] is False
