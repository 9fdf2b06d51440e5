"""report/kcidb.py: a results dir as one KernelCI KCIDB document, validated
against kcidb-io's latest schema (the test dependency that defines it)."""

from __future__ import annotations

import copy
import json
import re

import jsonschema
import pytest
from kcidb_io.schema import LATEST

from pytest_kbuild.build.record import BuildRecord
from pytest_kbuild.errors import KcidbError
from pytest_kbuild.report import cases, kcidb
from pytest_kbuild.results import SUMMARY_SCHEMA, Artifact, Status, TargetResult, write_json

COMMIT = "a28eb13d01f5ce210d4b71f695a34d2f593f86cc"
GIT = {
    "commit": COMMIT,
    "describe": "v6.1-12-ga28eb13",
    "describe_tags": "v6.1-12-ga28eb13",
    "branch": "master",
    "remote_url": "https://ci:***@git.example.org/linux.git",
}
BASE = "https://ci.example.org/jobs/7/kbuild-results"
KUNIT_CASES = [
    {"suite": "list-kunit-test", "name": "list_add_test", "status": "PASS", "reason": ""},
    {
        "suite": "list-kunit-test",
        "name": "list_del_test",
        "status": "FAIL",
        "reason": "",
        "diagnostics": ["# list_del_test: EXPECTATION FAILED at lib/list-test.c:55"],
    },
    {"suite": "example", "name": "example skip (1 of 2)", "status": "SKIP", "reason": "skipped"},
    {"suite": "example", "name": "example_crash", "status": "ERROR", "reason": "oops"},
]


def target(name, status, duration=1.5, **kw):
    return TargetResult(name, Status(status), duration, **kw)


def write_build(top, build_id, results, *, git=GIT, status=None, requested=None, **extra):
    """A build folder with a metadata.json of the real record type and the
    files its artifacts name; returns its results.json entry (as the
    plugin's ResultsReporter makes it)."""
    folder = top / "m" / build_id
    folder.mkdir(parents=True)
    (folder / "build.log").write_text("$ make\n")
    (folder / "reproducer.sh").write_text("kbuild\n")
    for t in results:
        for name in [a.name for a in t.artifacts]:
            (folder / name).write_text(name)
    arch, toolchain, kconfig = build_id.split("-", 2)
    record = BuildRecord(
        build_id=build_id,
        arch=arch,
        toolchain={"name": toolchain, "compiler": "gcc", "version": "gcc (Debian 12.2.0) 12.2.0"},
        kconfig=kconfig,
        kconfig_add=list(extra.pop("kconfig_add", [])),
        make_variables={},
        makevars={"ARCH": arch},
        env={},
        wrapper={"name": "none"},
        runtime={"name": "local"},
        jobs=2,
        jobserver=None,
        targets_requested=list(requested or [t.name for t in results]),
        options={},
        reproducer=f"kbuild --target-arch={arch} --toolchain={toolchain} --kconfig={kconfig}",
        started="2026-01-02T03:04:05+00:00",
        tree={"path": "/src/linux", "kernelversion": "6.1.0", "git": git},
        **extra,
    )
    for t in results:
        record.record_target(t)
    worst = [s for s in ("INTERRUPTED", "ERROR", "FAIL") if any(t.status == s for t in results)]
    record.status = status or (worst[0] if worst else "PASS")
    record.write(folder)
    entries = {}
    for t in results:
        outcome = {"PASS": "passed", "SKIP": "skipped", "INTERRUPTED": "interrupted"}.get(
            t.status.value, "failed"
        )
        entry = {"outcome": outcome, "status": t.status.value, "duration": t.duration}
        if t.cases:
            entry["cases"] = cases.statuses(t.cases)
        entries[t.name] = entry
    return {
        "build_id": build_id,
        "arch": arch,
        "toolchain": toolchain,
        "kconfig": kconfig,
        "matrix": "m.yaml",
        "targets": entries,
    }


def artifact(name):
    return Artifact(name, name, 1, "0" * 64)


def every_kind_of_build(top):
    """A results dir with a PASS build (booted, KUnit, kselftest), a FAIL,
    an ERROR, a SKIP and an interrupted build."""
    config = target("config", "PASS", artifacts=[artifact("config")])
    builds = {
        "x86_64-gcc-defconfig": write_build(
            top,
            "x86_64-gcc-defconfig",
            [
                config,
                target("kernel", "PASS", 60.25, artifacts=[artifact("bzImage")]),
                target(
                    "boot",
                    "PASS",
                    4.0,
                    boot={"qemu": "QEMU 7.2", "machine": "q35", "console": "boot.log"},
                    artifacts=[artifact("boot.log"), artifact("initramfs.cpio")],
                ),
                target(
                    "kunit",
                    "FAIL",
                    9.0,
                    reason="1 of 4 cases failed",
                    boot={"machine": "q35", "console": "kunit.log"},
                    cases=copy.deepcopy(KUNIT_CASES),
                    artifacts=[artifact("kunit.log")],
                ),
                target("kselftest", "WARNING", 30.0, artifacts=[artifact("kselftest.tar.xz")]),
            ],
            kconfig_add=["kernel/configs/kvm_guest.config", "CONFIG_KASAN=y"],
        ),
        "arm64-gcc-defconfig": write_build(
            top,
            "arm64-gcc-defconfig",
            [
                config,
                target(
                    "kernel",
                    "FAIL",
                    errors=["kernel/fork.c:5:26: error: 'x' undeclared"],
                    reason="make Image.gz failed",
                ),
                target("boot", "SKIP", 0.0, reason="needs kernel, which failed"),
            ],
        ),
        "riscv-gcc-defconfig": write_build(
            top,
            "riscv-gcc-defconfig",
            [config, target("kernel", "ERROR", reason="out of memory", infra="out-of-memory")],
        ),
        "sparc-clang-tinyconfig": write_build(
            top,
            "sparc-clang-tinyconfig",
            [
                target("config", "SKIP", 0.0, reason="clang cannot build sparc"),
                target("kernel", "SKIP", 0.0, reason="clang cannot build sparc"),
            ],
            skip_reason="clang cannot build sparc",
        ),
        "x86_64-gcc-tinyconfig": write_build(
            top,
            "x86_64-gcc-tinyconfig",
            [config, target("kernel", "INTERRUPTED", reason="the run was interrupted")],
            requested=["config", "kernel", "boot"],
        ),
    }
    write_summary(top, builds)
    return top


def write_summary(top, builds):
    """results.json of *builds* (by build id), keyed as the plugin keys them."""
    keyed = {f"m.yaml::{build_id}": entry for build_id, entry in builds.items()}
    write_json(top / "results.json", {"schema": SUMMARY_SCHEMA, "builds": keyed})


def doc_of(top, origin="my_ci", base_url=BASE):
    doc = kcidb.document(top, kcidb.read_summary(top), origin, base_url)
    LATEST.validate(doc)
    return doc


def builds_by_id(doc):
    return {b["misc"]["build_id"]: b for b in doc["builds"]}


def kcidb_tests_of(doc, build):
    return {t["path"]: t for t in doc["tests"] if t["build_id"] == build["id"]}


def test_every_kind_of_build_is_a_valid_document_with_kcidbs_statuses(tmp_path):
    doc = doc_of(every_kind_of_build(tmp_path))
    assert doc["version"] == {"major": LATEST.major, "minor": LATEST.minor}
    builds = builds_by_id(doc)
    assert {b: builds[b]["status"] for b in builds} == {
        "x86_64-gcc-defconfig": "PASS",  # its kunit FAIL is a test's, not the build's
        "arm64-gcc-defconfig": "FAIL",
        "riscv-gcc-defconfig": "ERROR",
        "sparc-clang-tinyconfig": "SKIP",
        "x86_64-gcc-tinyconfig": "MISS",
    }
    [checkout] = doc["checkouts"]
    assert checkout == {
        "id": checkout["id"],
        "origin": "my_ci",
        "git_commit_hash": COMMIT,
        "git_commit_name": "v6.1-12-ga28eb13",
        "git_repository_branch": "master",
        "git_repository_url": "https://git.example.org/linux.git",  # no user, no password
        "comment": "Linux 6.1.0",
        "valid": True,
        "misc": {"kernelversion": "6.1.0", "revision": COMMIT},
    }
    assert {b["checkout_id"] for b in doc["builds"]} == {checkout["id"]}


def test_a_build_has_its_arch_compiler_config_time_and_files(tmp_path):
    doc = doc_of(every_kind_of_build(tmp_path))
    b = builds_by_id(doc)["x86_64-gcc-defconfig"]
    folder = f"{BASE}/m/x86_64-gcc-defconfig"
    assert b["architecture"] == "x86_64"
    assert b["compiler"] == "gcc (Debian 12.2.0) 12.2.0"
    assert b["config_name"] == "defconfig+kvm_guest.config+CONFIG_KASAN=y"
    assert b["config_url"] == f"{folder}/config"
    assert b["start_time"] == "2026-01-02T03:04:05+00:00"
    assert b["duration"] == 61.75  # config and kernel; the tests' time is theirs
    assert b["log_url"] == f"{folder}/build.log"
    assert [f["name"] for f in b["output_files"]] == [
        "config",
        "bzImage",
        "metadata.json",
        "reproducer.sh",
    ]
    assert b["command"].startswith("kbuild --target-arch=x86_64")
    assert b["misc"]["targets"] == {"config": "PASS", "kernel": "PASS"}
    failed = builds_by_id(doc)["arm64-gcc-defconfig"]
    assert failed["log_excerpt"] == "kernel/fork.c:5:26: error: 'x' undeclared"


def test_boot_kunit_and_kselftest_are_tests_and_each_case_is_one(tmp_path):
    doc = doc_of(every_kind_of_build(tmp_path))
    builds = builds_by_id(doc)
    passed = kcidb_tests_of(doc, builds["x86_64-gcc-defconfig"])
    folder = f"{BASE}/m/x86_64-gcc-defconfig"
    assert {p: t["status"] for p, t in passed.items()} == {
        "boot": "PASS",
        "kunit": "FAIL",
        "kunit.list-kunit-test.list_add_test": "PASS",
        "kunit.list-kunit-test.list_del_test": "FAIL",
        "kunit.example.example_skip__1_of_2_": "SKIP",
        "kunit.example.example_crash": "ERROR",
        "kselftest.install": "PASS",  # WARNING: passed with problems
    }
    boot = passed["boot"]
    assert boot["log_url"] == f"{folder}/boot.log" and boot["duration"] == 4.0
    assert boot["output_files"] == [{"name": "initramfs.cpio", "url": f"{folder}/initramfs.cpio"}]
    assert boot["environment"] == {
        "comment": "QEMU q35",
        "misc": {"qemu": "QEMU 7.2", "machine": "q35"},
    }
    failed_case = passed["kunit.list-kunit-test.list_del_test"]
    assert failed_case["log_url"] == f"{folder}/kunit.log"
    assert failed_case["log_excerpt"].startswith("# list_del_test: EXPECTATION FAILED")
    assert passed["kselftest.install"]["misc"]["status"] == "WARNING"
    # a boot that a failed kernel skipped; an interrupted build's boot never ran
    assert kcidb_tests_of(doc, builds["arm64-gcc-defconfig"])["boot"]["status"] == "SKIP"
    never = kcidb_tests_of(doc, builds["x86_64-gcc-tinyconfig"])["boot"]
    assert never["status"] == "MISS" and never["misc"]["status"] == "not run"
    assert not kcidb_tests_of(doc, builds["riscv-gcc-defconfig"])  # no test target asked for


def test_without_a_base_url_there_are_no_urls(tmp_path):
    doc = doc_of(every_kind_of_build(tmp_path), base_url=None)
    text = json.dumps(doc)
    for key in ("log_url", "config_url", "output_files", "input_files"):
        assert key not in text


def test_a_file_url_base_and_odd_names_are_quoted(tmp_path):
    top = tmp_path / "res"
    entry = write_build(top, "x86_64-gcc-my+config", [target("config", "PASS")])
    write_summary(top, {"x86_64-gcc-my+config": entry})
    [b] = doc_of(top, base_url="file:///srv/res/")["builds"]
    assert b["log_url"] == "file:///srv/res/m/x86_64-gcc-my%2Bconfig/build.log"


def test_ids_are_the_same_in_a_rerun_of_the_same_spec_and_commit(tmp_path):
    first = doc_of(every_kind_of_build(tmp_path / "run1"))
    rerun_dir = every_kind_of_build(tmp_path / "run2")
    # a re-run: other times, durations and results dir; the same spec and commit
    meta = rerun_dir / "m" / "x86_64-gcc-defconfig" / "metadata.json"
    data = json.loads(meta.read_text())
    data["started"] = "2027-05-06T07:08:09+00:00"
    data["targets"]["kernel"]["duration"] = 99.0
    meta.write_text(json.dumps(data))
    again = doc_of(rerun_dir)

    def ids(doc):
        return [o["id"] for kind in ("checkouts", "builds", "tests") for o in doc[kind]]

    assert ids(first) == ids(again)
    assert len(set(ids(first))) == len(ids(first))  # every object its own id
    assert all(i.startswith("my_ci:") for i in ids(first))
    other_origin = doc_of(tmp_path / "run1", origin="other_ci")
    assert [i.split(":", 1)[1] for i in ids(other_origin)] == [
        i.split(":", 1)[1] for i in ids(first)
    ]


def test_another_commit_or_a_dirty_tree_is_another_checkout_and_other_builds(tmp_path):
    clean = doc_of(every_kind_of_build(tmp_path / "a"))
    top = tmp_path / "b"
    entry = write_build(
        top, "x86_64-gcc-defconfig", [target("config", "PASS")], git={**GIT, "commit": "b" * 40}
    )
    dirty = write_build(
        top,
        "arm64-gcc-defconfig",
        [target("config", "PASS")],
        git={**GIT, "describe": "v6.1-12-ga28eb13-dirty"},
    )
    builds = {"x86_64-gcc-defconfig": entry, "arm64-gcc-defconfig": dirty}
    write_summary(top, builds)
    other = doc_of(top)
    assert len(other["checkouts"]) == 2
    assert not {c["id"] for c in other["checkouts"]} & {c["id"] for c in clean["checkouts"]}
    assert not {b["id"] for b in other["builds"]} & {b["id"] for b in clean["builds"]}


def test_a_tree_without_git_is_a_checkout_without_commit(tmp_path):
    top = tmp_path / "res"
    none = dict.fromkeys(GIT)
    entry = write_build(top, "x86_64-gcc-defconfig", [target("config", "PASS")], git=none)
    write_summary(top, {"x86_64-gcc-defconfig": entry})
    [checkout] = doc_of(top)["checkouts"]
    assert "git_commit_hash" not in checkout
    assert checkout["misc"]["revision"] == "no git: Linux 6.1.0"


def test_the_validation_catches_what_a_wrong_writer_would_write(tmp_path):
    # The schema checks are what these tests rely on: each of these breaks it.
    good = doc_of(every_kind_of_build(tmp_path))
    breakages = [
        lambda d: d["builds"][0].pop("origin"),
        lambda d: d["builds"][0].update(id="no-origin-prefix"),
        lambda d: d["builds"][0].update(status="WARNING"),
        lambda d: d["builds"][0].update(log_url="m/x/build.log"),  # not absolute
        lambda d: d["builds"][0].update(start_time="2026-01-02 03:04"),
        lambda d: d["tests"][0].update(path="kunit.a b"),
        lambda d: d["tests"][0].update(comment=None),  # KCIDB has no nulls
        lambda d: d["checkouts"][0].update(git_repository_url="git@host:linux.git"),
    ]
    for breakage in breakages:
        bad = copy.deepcopy(good)
        breakage(bad)
        with pytest.raises(jsonschema.ValidationError):
            LATEST.validate(bad)


def test_write_writes_the_document(tmp_path):
    top = every_kind_of_build(tmp_path / "res")
    out = tmp_path / "out" / "kcidb.json"
    doc = kcidb.write(kcidb.Destination(out, "my_ci", BASE), top, kcidb.read_summary(top))
    assert json.loads(out.read_text()) == doc
    LATEST.validate(json.loads(out.read_text()))


def test_bad_results_dirs_name_the_file_and_what_is_accepted(tmp_path):
    accepted = re.escape("accepted: a results dir with the results.json (schema 4) that a run or")
    with pytest.raises(KcidbError, match=rf"^'{tmp_path / 'none'}' is not a directory; {accepted}"):
        kcidb.read_summary(tmp_path / "none")
    summary = tmp_path / "results.json"
    with pytest.raises(KcidbError, match=rf"^'{summary}' does not exist; {accepted}"):
        kcidb.read_summary(tmp_path)
    summary.write_text("{not json")
    with pytest.raises(KcidbError, match=rf"^'{summary}' cannot be read as JSON \("):
        kcidb.read_summary(tmp_path)
    summary.write_text('{"schema": 2, "builds": {}}')
    with pytest.raises(KcidbError, match=rf"^'{summary}' has schema 2; {accepted}"):
        kcidb.read_summary(tmp_path)
    summary.write_text('{"schema": 4}')
    with pytest.raises(KcidbError, match=rf"^'{summary}' has no builds object; {accepted}"):
        kcidb.read_summary(tmp_path)


def test_a_metadata_of_another_schema_is_named_and_an_unknown_status_read(tmp_path):
    top = every_kind_of_build(tmp_path / "res")
    meta = top / "m" / "riscv-gcc-defconfig" / "metadata.json"
    data = json.loads(meta.read_text())
    meta.write_text(json.dumps({**data, "schema": 7}))
    with pytest.raises(KcidbError, match=rf"^'{meta}' has schema 7; accepted: a metadata.json"):
        kcidb.document(top, kcidb.read_summary(top), "my_ci")
    meta.write_text(json.dumps(data))
    summary = json.loads((top / "results.json").read_text())
    summary["builds"]["m.yaml::riscv-gcc-defconfig"]["targets"]["kernel"]["status"] = "FLAKY"
    # a status of a newer version is read by its pytest outcome, as the grid does
    doc = kcidb.document(top, summary, "my_ci")
    LATEST.validate(doc)
    assert builds_by_id(doc)["riscv-gcc-defconfig"]["status"] == "FAIL"


def test_a_build_without_metadata_comes_from_results_json(tmp_path):
    top = every_kind_of_build(tmp_path / "res")
    (top / "m" / "arm64-gcc-defconfig" / "metadata.json").unlink()
    b = builds_by_id(doc_of(top))["arm64-gcc-defconfig"]
    assert b["status"] == "FAIL" and b["architecture"] == "arm64" and b["compiler"] == "gcc"


def test_the_kcidb_command_writes_a_valid_document(tmp_path, capsys):
    from pytest_kbuild.cli.commands import EXIT_OK, main

    top = every_kind_of_build(tmp_path / "res")
    out = tmp_path / "kcidb.json"
    args = ["kcidb", str(top), "--origin", "my_ci", "--kcidb-base-url", BASE, "-o", str(out)]
    assert main(args) == EXIT_OK
    doc = json.loads(out.read_text())
    LATEST.validate(doc)
    assert doc == kcidb.document(top, kcidb.read_summary(top), "my_ci", BASE)
    assert capsys.readouterr().out == (
        f"I: KCIDB document of {top}: {out} (1 checkout, 5 builds, 9 tests)\n"
    )
    assert main(["kcidb", str(top), "--origin", "my_ci"]) == EXIT_OK  # into the results dir
    LATEST.validate(json.loads((top / "kcidb.json").read_text()))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--origin", "My-CI"], "E: --origin: 'My-CI' is not a KCIDB origin; accepted: lower-case"),
        (
            ["--origin", "x", "--kcidb-base-url", "ftp://h/r"],
            "E: --kcidb-base-url: 'ftp://h/r' has scheme 'ftp'; accepted: an http://, https://",
        ),
    ],
)
def test_the_kcidb_command_names_a_bad_value(tmp_path, capsys, args, message):
    from pytest_kbuild.cli.commands import EXIT_INPUT, main

    top = every_kind_of_build(tmp_path / "res")
    assert main(["kcidb", str(top), *args]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(message) and "Traceback" not in err
    assert not (top / "kcidb.json").exists()


def test_the_kcidb_command_names_a_bad_results_dir_or_output(tmp_path, capsys):
    from pytest_kbuild.cli.commands import EXIT_INPUT, main

    assert main(["kcidb", str(tmp_path), "--origin", "x"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"E: '{tmp_path / 'results.json'}' does not exist; accepted: ")
    (tmp_path / "results.json").write_text('{"schema": 1, "builds": {}}')
    assert main(["kcidb", str(tmp_path), "--origin", "x"]) == EXIT_INPUT
    assert capsys.readouterr().err.startswith(f"E: '{tmp_path / 'results.json'}' has schema 1; ")
    top = every_kind_of_build(tmp_path / "res")
    (tmp_path / "a-file").write_text("")
    bad = tmp_path / "a-file" / "kcidb.json"  # its folder cannot be made
    assert main(["kcidb", str(top), "--origin", "x", "-o", str(bad)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"E: -o {bad}: ") and "Traceback" not in err


def test_the_matrix_is_named_by_its_file_not_where_it_was(tmp_path):
    # results.json names the matrix relative to pytest's rootdir
    # (../../ci/m.yaml): the document names the file, the ids its stem.
    top = every_kind_of_build(tmp_path / "res")
    summary = kcidb.read_summary(top)
    before = kcidb.document(top, summary, "my_ci")
    for entry in summary["builds"].values():
        entry["matrix"] = "../../home/ci/m.yaml"
    after = kcidb.document(top, summary, "my_ci")
    LATEST.validate(after)
    b = builds_by_id(after)["arm64-gcc-defconfig"]
    assert b["comment"] == "arm64-gcc-defconfig (m.yaml)" and b["misc"]["matrix"] == "m.yaml"
    assert "home" not in json.dumps(after)
    assert [x["id"] for x in after["builds"]] == [x["id"] for x in before["builds"]]


def test_two_matrices_with_a_build_of_the_same_id_are_two_builds(tmp_path):
    # results.json keys builds by <matrix>::<build id> (schema 4)
    top = tmp_path / "res"
    entry = write_build(top, "x86_64-gcc-defconfig", [target("config", "PASS")])
    other = copy.deepcopy(entry) | {"matrix": "other.yaml"}
    (top / "other").mkdir()
    (top / "m" / "x86_64-gcc-defconfig").rename(top / "other" / "x86_64-gcc-defconfig")
    entry = write_build(top, "x86_64-gcc-defconfig", [target("config", "PASS")])
    builds = {"m.yaml::x86_64-gcc-defconfig": entry, "other.yaml::x86_64-gcc-defconfig": other}
    write_json(top / "results.json", {"schema": SUMMARY_SCHEMA, "builds": builds})
    doc = doc_of(top)
    assert [b["comment"] for b in doc["builds"]] == [
        "x86_64-gcc-defconfig (m.yaml)",
        "x86_64-gcc-defconfig (other.yaml)",
    ]
    assert len({b["id"] for b in doc["builds"]}) == 2
