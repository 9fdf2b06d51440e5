"""cases.py: the ids, outcomes, failure texts and counts of the test cases
a target ran (KUnit's)."""

from __future__ import annotations

from pytest_kbuild.report import cases


def case(suite="list-kunit-test", name="list_add_test", status="PASS", **kw):
    return {"suite": suite, "name": name, "status": status, "reason": "", "diagnostics": [], **kw}


def test_case_id_is_suite_dot_name_without_separators():
    assert cases.case_id(case()) == "list-kunit-test.list_add_test"
    assert cases.case_id(case(suite="a::b", name="x y")) == "a:b.x_y"
    assert cases.case_id(case(suite="")) == "list_add_test"


def test_unknown_status_is_an_error_and_outcomes_follow_status():
    assert cases.status(case(status="pass")) == "PASS"
    assert cases.status(case(status="CRASHED")) == "ERROR"
    assert [cases.outcome(case(status=s)) for s in ("PASS", "FAIL", "ERROR", "SKIP")] == [
        "passed",
        "failed",
        "failed",
        "skipped",
    ]


def test_failure_text_has_reason_diagnostics_and_console():
    failed = case(
        status="FAIL",
        reason="1 expectation failed",
        diagnostics=[
            "# list_add_test: EXPECTATION FAILED at lib/list-test.c:30",
            "Expected 1 == 2",
        ],
    )
    text = cases.failure_text(failed, "results/m/b/kunit.log")
    assert text.splitlines() == [
        "list-kunit-test.list_add_test FAIL: 1 expectation failed",
        "  # list_add_test: EXPECTATION FAILED at lib/list-test.c:30",
        "  Expected 1 == 2",
        "console: results/m/b/kunit.log",
    ]


def test_diagnostics_are_bounded_in_count_and_length():
    many = case(status="FAIL", diagnostics=[f"line {i}" for i in range(100)] + ["x" * 5000])
    shown = cases.diagnostics(many)
    assert len(shown) == cases.MAX_DIAGNOSTICS + 1
    assert shown[-1] == f"... {101 - cases.MAX_DIAGNOSTICS} more lines in the console log"
    long = cases.diagnostics(case(diagnostics=["y" * 5000]))
    assert len(long[0]) == cases.MAX_LINE and long[0].endswith("...")


def test_skip_reason_defaults():
    assert cases.skip_reason(case(status="SKIP", reason="this test should be skipped")) == (
        "this test should be skipped"
    )
    assert cases.skip_reason(case(status="SKIP")) == "skipped by KUnit"


def test_counts_totals_and_summary_lines():
    k1 = cases.statuses([case(), case(name="b", status="FAIL"), case(name="c", status="SKIP")])
    assert k1 == {
        "list-kunit-test.list_add_test": "PASS",
        "list-kunit-test.b": "FAIL",
        "list-kunit-test.c": "SKIP",
    }
    assert cases.counts(k1) == {"cases": 3, "PASS": 1, "FAIL": 1, "SKIP": 1}
    builds = {
        "um-gcc-kunit": {"targets": {"kernel": {}, "kunit": {"cases": k1}}},
        "x86_64-gcc-kunit": {"targets": {"kunit": {"cases": {"s.a": "PASS", "s.b": "ERROR"}}}},
        "other": {"targets": {"kernel": {"outcome": "passed"}}},
    }
    assert cases.totals(builds) == {"cases": 5, "PASS": 2, "FAIL": 1, "SKIP": 1, "ERROR": 1}
    assert cases.summary_lines(builds) == [
        "5 cases (2 PASS, 1 FAIL, 1 SKIP, 1 ERROR)",
        "  um-gcc-kunit::kunit::list-kunit-test.b FAIL",
        "  x86_64-gcc-kunit::kunit::s.b ERROR",
    ]
    assert cases.summary_lines({"other": builds["other"]}) == []


def test_summary_lists_a_bounded_number_of_broken_cases():
    broken = {f"s.c{i:03}": "FAIL" for i in range(cases.SUMMARY_SHOWN + 5)}
    lines = cases.summary_lines({"b": {"targets": {"kunit": {"cases": broken}}}})
    assert len(lines) == 1 + cases.SUMMARY_SHOWN + 1
    assert lines[-1] == "  ... 5 more in results.json"


def test_for_report_puts_broken_cases_first_in_run_order():
    ran = [case(name="a"), case(name="b", status="ERROR"), case(name="c", status="SKIP")]
    ran.append(case(name="d", status="FAIL", diagnostics=["Expected x == y"]))
    shown = cases.for_report(ran)
    assert [(c["id"].split(".")[1], c["status"]) for c in shown] == [
        ("b", "ERROR"),
        ("d", "FAIL"),
        ("a", "PASS"),
        ("c", "SKIP"),
    ]
    assert shown[1]["diagnostics"] == ["Expected x == y"]
