"""report.py's data: which builds of a results dir the page shows."""

from __future__ import annotations

import json

from pytest_kbuild.report import html as report


def test_a_run_reports_its_own_builds_not_earlier_ones_in_the_same_dir(tmp_path):
    for build in ("x86_64-gcc-defconfig", "arm64-gcc-defconfig"):
        folder = tmp_path / "m" / build
        folder.mkdir(parents=True)
        arch = build.split("-")[0]
        meta = {"build_id": build, "arch": arch, "toolchain": "gcc", "kconfig": "defconfig"}
        meta["targets"] = {"config": {"status": "PASS", "diagnostics": []}}
        (folder / "metadata.json").write_text(json.dumps(meta))
    out = tmp_path / "report.html"
    every = report.data(tmp_path, out)
    assert [b["id"] for b in every["builds"]] == ["arm64-gcc-defconfig", "x86_64-gcc-defconfig"]
    only = report.data(tmp_path, out, only={"x86_64-gcc-defconfig"})
    assert [b["id"] for b in only["builds"]] == ["x86_64-gcc-defconfig"]
    assert only["builds"][0]["links"] == [
        {"name": "metadata.json", "href": "m/x86_64-gcc-defconfig/metadata.json"}
    ]


def test_a_target_lists_its_cases_broken_first(tmp_path):
    folder = tmp_path / "m" / "um-gcc-kunit"
    folder.mkdir(parents=True)
    ran = [
        {"suite": "example", "name": "example_simple_test", "status": "PASS"},
        {"suite": "example", "name": "example_skip_test", "status": "SKIP", "reason": "skip"},
        {
            "suite": "list-kunit-test",
            "name": "list_del_test",
            "status": "FAIL",
            "diagnostics": ["# list_del_test: EXPECTATION FAILED at lib/list-test.c:55"],
        },
    ]
    meta = {"build_id": "um-gcc-kunit", "arch": "um", "toolchain": "gcc", "kconfig": "kunit"}
    meta["targets"] = {
        "kernel": {"status": "PASS", "diagnostics": []},
        "kunit": {"status": "FAIL", "diagnostics": [], "cases": ran},
    }
    (folder / "metadata.json").write_text(json.dumps(meta))
    targets = report.data(tmp_path, tmp_path / "report.html")["builds"][0]["targets"]
    assert targets[0]["cases"] == []
    assert [(c["id"], c["status"]) for c in targets[1]["cases"]] == [
        ("list-kunit-test.list_del_test", "FAIL"),
        ("example.example_simple_test", "PASS"),
        ("example.example_skip_test", "SKIP"),
    ]
    assert targets[1]["cases"][0]["diagnostics"] == [
        "# list_del_test: EXPECTATION FAILED at lib/list-test.c:55"
    ]
    assert targets[1]["cases"][2]["reason"] == "skip"
