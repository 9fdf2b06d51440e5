import json
import xml.etree.ElementTree as ET

import pytest

from pytest_kbuild.cli.commands import EXIT_INPUT, EXIT_OK, main
from pytest_kbuild.errors import MergeError
from pytest_kbuild.report.merge import JUNIT, Merged, merge


def make_shard(root, name, builds, cases, suite_counts="tests='99'"):
    """A results dir as a shard leaves it: <matrix stem>/<build id>/, results.json, junit.xml.

    *builds*: {build id: {target: outcome}}; *cases*: [(build id, target, child tag or None)].
    """
    d = root / name
    summary = {
        "schema": 4,
        "matrices": [f"/ci/{name}/m.yaml"],
        "results_dir": str(d),
        "totals": {"builds": 999},
        "builds": {},
    }
    for build_id, targets in builds.items():
        out = d / "m" / build_id
        out.mkdir(parents=True)
        (out / "build.log").write_text(f"log of {build_id}\n")
        (out / "metadata.json").write_text("{}")
        summary["builds"][f"m.yaml::{build_id}"] = {
            "build_id": build_id,
            "arch": "x86_64",
            "toolchain": "gcc",
            "kconfig": "defconfig",
            "matrix": "m.yaml",
            "targets": {
                t: {"outcome": o, "duration": 1.0, "log": str(out / "build.log")}
                for t, o in targets.items()
            },
        }
    if builds:
        (d / "results.json").write_text(json.dumps(summary))
    else:
        d.mkdir(parents=True)
    testcases = "".join(
        f"<testcase classname='m.yaml.{b}' name='{t}' time='1.0'>"
        + (f"<{child} message='x'/>" if child else "")
        + "</testcase>"
        for b, t, child in cases
    )
    (d / JUNIT).write_text(
        "<?xml version='1.0' encoding='utf-8'?><testsuites name='pytest tests'>"
        f"<testsuite name='pytest' {suite_counts} time='2.5' hostname='{name}'>{testcases}"
        "</testsuite></testsuites>"
    )
    return d


@pytest.fixture
def shards(tmp_path):
    a = make_shard(
        tmp_path,
        "shard-1",
        {"x86_64-gcc-defconfig": {"config": "passed", "kernel": "failed"}},
        [("x86_64-gcc-defconfig", "config", None), ("x86_64-gcc-defconfig", "kernel", "failure")],
    )
    b = make_shard(
        tmp_path,
        "shard-2",
        {"arm64-gcc-defconfig": {"config": "passed", "dtbs": "skipped"}},
        [("arm64-gcc-defconfig", "config", "error"), ("arm64-gcc-defconfig", "dtbs", "skipped")],
    )
    c = make_shard(tmp_path, "shard-3", {}, [])  # more shards than builds: nothing built
    return a, b, c


def test_merge_copies_build_folders_and_combines_results(tmp_path, shards):
    out = tmp_path / "merged"
    done = merge(out, shards)
    assert done == Merged(out, 2, 4)
    assert (out / "m/x86_64-gcc-defconfig/build.log").read_text() == (
        "log of x86_64-gcc-defconfig\n"
    )
    assert (out / "m/arm64-gcc-defconfig/metadata.json").is_file()
    summary = json.loads((out / "results.json").read_text())
    assert summary["schema"] == 4
    assert summary["results_dir"] == str(out.resolve())
    assert summary["matrices"] == ["/ci/shard-1/m.yaml", "/ci/shard-2/m.yaml"]
    assert summary["totals"] == {"builds": 2, "passed": 2, "failed": 1, "skipped": 1}
    assert list(summary["builds"]) == [
        "m.yaml::arm64-gcc-defconfig",
        "m.yaml::x86_64-gcc-defconfig",
    ]
    # Log paths point into the merged directory.
    log = summary["builds"]["m.yaml::x86_64-gcc-defconfig"]["targets"]["kernel"]["log"]
    assert log == str(out.resolve() / "m/x86_64-gcc-defconfig/build.log")


def test_merge_junit_one_testsuites_with_recomputed_counts(tmp_path, shards):
    out = tmp_path / "merged"
    merge(out, shards)
    root = ET.parse(out / JUNIT).getroot()
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped", "time")} == {
        "tests": "4",
        "failures": "1",
        "errors": "1",
        "skipped": "1",
        "time": "7.500",
    }
    suites = root.findall("testsuite")
    assert [s.get("hostname") for s in suites] == ["shard-1", "shard-2", "shard-3"]
    assert [s.get("tests") for s in suites] == ["2", "2", "0"]  # was 99 in every input
    assert [(s.get("failures"), s.get("errors"), s.get("skipped")) for s in suites] == [
        ("1", "0", "0"),
        ("0", "1", "1"),
        ("0", "0", "0"),
    ]
    assert len(root.findall(".//testcase")) == 4


def test_merge_accepts_a_bare_testsuite_root(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "other.xml").write_text("<testsuite name='s'><testcase name='t'/></testsuite>")
    done = merge(tmp_path / "out", [d])
    assert done == Merged(tmp_path / "out", 0, 1)
    assert not (tmp_path / "out" / "results.json").exists()


def test_duplicate_build_folder_names_both_dirs_and_writes_nothing(tmp_path, shards):
    a, b, _ = shards
    twin = make_shard(tmp_path, "again", {"x86_64-gcc-defconfig": {"config": "passed"}}, [])
    with pytest.raises(MergeError) as exc:
        merge(tmp_path / "merged", [a, b, twin])
    assert str(exc.value) == (
        f"build folder 'm/x86_64-gcc-defconfig': is in both {str(a)!r} and {str(twin)!r}; "
        "each build must come from exactly one shard"
    )
    assert not (tmp_path / "merged").exists()


def test_duplicate_build_id_in_results_json(tmp_path):
    a = make_shard(tmp_path, "a", {"x-gcc-defconfig": {"config": "passed"}}, [])
    b = make_shard(tmp_path, "b", {}, [])
    (b / "results.json").write_text((a / "results.json").read_text())
    with pytest.raises(MergeError) as exc:
        merge(tmp_path / "merged", [a, b])
    assert str(exc.value) == (
        f"build 'm.yaml::x-gcc-defconfig' in results.json: is in both {str(a)!r} and {str(b)!r}; "
        "each build must come from exactly one shard"
    )


def test_existing_build_folder_in_out_is_an_error(tmp_path, shards):
    out = tmp_path / "merged"
    (out / "m" / "arm64-gcc-defconfig").mkdir(parents=True)
    with pytest.raises(MergeError, match="already exists; merge into a new directory"):
        merge(out, shards)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: d.rmdir(), "{d}: is not a directory"),
        (
            lambda d: (d / "results.json").write_text("{"),
            "{d}/results.json: cannot be read as JSON: ",
        ),
        (
            lambda d: (d / "results.json").write_text('{"schema": 1}'),
            "{d}/results.json: is not a results.json: no builds object",
        ),
        (
            lambda d: (d / "results.json").write_text('{"schema": 1, "builds": {}}'),
            "{d}/results.json: has schema 1; accepted: 4",
        ),
        (
            lambda d: (d / "results.json").write_text(
                '{"schema": 4, "builds": {"b": {"targets": 1}}}'
            ),
            "{d}/results.json: builds.b has no targets with outcomes",
        ),
        (lambda d: (d / "j.xml").write_text("<testsuites>"), "{d}/j.xml: cannot be read as XML: "),
        (
            lambda d: (d / "j.xml").write_text("<html/>"),
            "{d}/j.xml: root element is <html>; accepted: <testsuites> or <testsuite>",
        ),
    ],
)
def test_bad_inputs(tmp_path, setup, message):
    d = tmp_path / "shard"
    d.mkdir()
    setup(d)
    with pytest.raises(MergeError) as exc:
        merge(tmp_path / "out", [d])
    assert str(exc.value).startswith(message.format(d=d))


def test_out_must_not_be_an_input(tmp_path, shards):
    with pytest.raises(MergeError, match="is also OUT; merge into another directory"):
        merge(shards[0], shards)


def test_cli_merge(tmp_path, shards, capsys):
    out = tmp_path / "merged"
    assert main(["merge", str(out), *map(str, shards)]) == EXIT_OK
    assert capsys.readouterr().out == (
        f"I: merged 3 results dirs into {out}: 2 builds, 4 testcases in junit.xml\n"
    )


def test_cli_merge_error(tmp_path, capsys):
    assert main(["merge", str(tmp_path / "out"), str(tmp_path / "nope")]) == EXIT_INPUT
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"E: {tmp_path / 'nope'}: is not a directory\n")


def test_cli_merge_needs_a_dir(capsys):
    with pytest.raises(SystemExit):
        main(["merge", "out"])
    assert "DIR" in capsys.readouterr().err


def test_merge_writes_the_grouped_diagnostics_of_the_merged_builds(tmp_path, shards, capsys):
    from pytest_kbuild.diagnostics import parse

    warn = "kernel/fork.c:123:9: warning: unused variable 'x' [-Wunused-variable]\n"
    diags = [d.to_json() for d in parse(warn)]
    for shard, build_id in zip(
        shards[:2], ["x86_64-gcc-defconfig", "arm64-gcc-defconfig"], strict=True
    ):
        meta = {"build_id": build_id, "targets": {"kernel": {"diagnostics": diags}}}
        (shard / "m" / build_id / "metadata.json").write_text(json.dumps(meta))
    out = tmp_path / "merged"
    merge(out, shards)
    [g] = json.loads((out / "diagnostics.json").read_text())["diagnostics"]
    assert g["builds"] == ["arm64-gcc-defconfig", "x86_64-gcc-defconfig"] and g["count"] == 2
    assert main(["diagnostics", str(out)]) == EXIT_OK
    assert capsys.readouterr().out == (
        "kernel/fork.c:123: warning: unused variable 'x' [-Wunused-variable] - 2 builds: "
        "arm64-gcc-defconfig, x86_64-gcc-defconfig\n"
    )
    assert main(["diagnostics", "--json", str(out)]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["diagnostics"] == [g]


def test_out_that_is_a_file_is_bad_input(tmp_path, shards, capsys):
    # Bug (issue 16): FileExistsError traceback.
    (tmp_path / "f.txt").write_text("x")
    assert main(["merge", str(tmp_path / "f.txt"), *map(str, shards)]) == EXIT_INPUT
    assert capsys.readouterr().err == (
        f"E: {tmp_path / 'f.txt'}: is a file; OUT is a directory, new or without these builds\n"
    )
    assert (tmp_path / "f.txt").read_text() == "x"


def test_a_full_disk_says_out_is_incomplete(tmp_path, shards, capsys):
    from tests.support import fill, small_disk

    with small_disk(tmp_path / "disk") as disk:
        fill(disk, 0)
        assert main(["merge", str(disk / "out"), *map(str, shards)]) == EXIT_INPUT
        err = capsys.readouterr().err
        assert err.startswith(f"E: {disk / 'out'}: could not be written (")
        assert "No space left on device); it is incomplete" in err and "Traceback" not in err


def test_merge_counts_the_cases_targets_ran(tmp_path):
    a = make_shard(tmp_path, "shard-1", {"um-gcc-kunit": {"kunit": "failed"}}, [])
    b = make_shard(tmp_path, "shard-2", {"x86_64-gcc-kunit": {"kunit": "passed"}}, [])
    for shard, ran in ((a, {"s.a": "PASS", "s.b": "FAIL"}), (b, {"s.a": "PASS", "s.c": "SKIP"})):
        summary = json.loads((shard / "results.json").read_text())
        for build in summary["builds"].values():
            build["targets"]["kunit"]["cases"] = ran
        (shard / "results.json").write_text(json.dumps(summary))
    merge(tmp_path / "merged", [a, b])
    merged = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert merged["case_totals"] == {"cases": 4, "PASS": 2, "FAIL": 1, "SKIP": 1}
    assert merged["builds"]["m.yaml::um-gcc-kunit"]["targets"]["kunit"]["cases"]["s.b"] == "FAIL"


def test_merge_without_cases_has_no_case_totals(tmp_path, shards):
    merge(tmp_path / "merged", shards)
    assert "case_totals" not in json.loads((tmp_path / "merged" / "results.json").read_text())
