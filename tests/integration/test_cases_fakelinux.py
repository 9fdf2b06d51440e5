"""The test cases a target ran (KUnit's) as reported results, with and
without xdist: their own lines and FAILED entries in the terminal, JUnit
testcases with the build's classname, results.json counts, and a progress
that stays at 100 %.

fakelinux has no KUnit: a conftest in the pytester dir gives the kernel
target of the build the cases a kunit run would have read (the real
kunit target is proven in test_kunit_real.py); what is tested here is
everything that reports them.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from tests.support import FAKE_KUNIT_CONFTEST as CONFTEST
from tests.support import builds_by_id

MATRIX = "arch: [x86_64]\ntoolchain: [gcc]\nkconfig: [tinyconfig]\ntargets: [config, kernel]\n"
BUILD = "x86_64-gcc-tinyconfig"
KERNEL = f"m.yaml::{BUILD}::kernel"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_cases_are_reported_one_by_one(pytester, fakelinux, xdist):
    pytester.makeconftest(CONFTEST)
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{MATRIX}")
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--kbuild-results=res", "--junitxml=j.xml", "-rA", *xdist
    )
    # 2 targets and 4 cases: the failed case fails the run.
    result.assert_outcomes(passed=4, failed=1, skipped=1)
    out = result.stdout.str()
    assert f"FAILED {KERNEL}::list-kunit-test.list_del_test" in out
    assert "Expected list_empty(&list) to be true, but is false" in out
    assert re.search(r"SKIPPED \[1\] m\.yaml.*this test should be skipped", out), out
    result.stdout.fnmatch_lines(
        [
            "*- kbuild cases (KUnit) -*",
            "4 cases (2 PASS, 1 FAIL, 1 SKIP)",
            f"  {BUILD}::kernel::list-kunit-test.list_del_test FAIL",
        ]
    )
    percents = [int(p) for p in re.findall(r"\[\s*(\d+)%\]", out)]
    assert percents and max(percents) == 100, out

    suite = ET.parse(pytester.path / "j.xml").getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {
        "config",
        "kernel",
        "list-kunit-test.list_add_test",
        "list-kunit-test.list_del_test",
        "example.example_skip_test",
        "example.example_simple_test",
    }
    assert {c.get("classname") for c in cases.values()} == {f"m.{BUILD}"}
    failure = cases["list-kunit-test.list_del_test"].find("failure")
    assert failure is not None
    assert "EXPECTATION FAILED at lib/list-test.c:55" in (
        failure.get("message", "") + (failure.text or "")
    )
    skipped = cases["example.example_skip_test"].find("skipped")
    assert skipped is not None and "this test should be skipped" in skipped.get("message", "")
    assert cases["example.example_simple_test"].find("failure") is None

    summary = json.loads((pytester.path / "res" / "results.json").read_text())
    kernel = builds_by_id(summary)[BUILD]["targets"]["kernel"]
    assert kernel["cases"] == {
        "list-kunit-test.list_add_test": "PASS",
        "list-kunit-test.list_del_test": "FAIL",
        "example.example_skip_test": "SKIP",
        "example.example_simple_test": "PASS",
    }
    assert summary["case_totals"] == {"cases": 4, "PASS": 2, "FAIL": 1, "SKIP": 1}
    # Cases are not targets: the build keeps its two targets.
    assert set(builds_by_id(summary)[BUILD]["targets"]) == {"config", "kernel"}
    meta = json.loads((pytester.path / "res" / "m" / BUILD / "metadata.json").read_text())
    kept = meta["targets"]["kernel"]["cases"]
    assert [(c["name"], c["status"]) for c in kept][:2] == [
        ("list_add_test", "PASS"),
        ("list_del_test", "FAIL"),
    ]


def test_a_case_can_be_selected_by_its_target_only(pytester, fakelinux):
    # Cases are reports, not items: -k on a case name selects nothing.
    pytester.makeconftest(CONFTEST)
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{MATRIX}")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--collect-only", "-q")
    assert [ln for ln in result.outlines if "::" in ln] == [
        f"m.yaml::{BUILD}::config",
        KERNEL,
    ]
