"""Reading KUnit's KTAP from console text (ktap.py), in the shape Linux 6.1
prints it (lib/kunit/test.c): suites indented one level, a parameterised
case's parameters two, a case's output before its result line."""

from __future__ import annotations

from pathlib import Path

from pytest_kbuild.boot import ktap
from pytest_kbuild.results import Status

# A 6.1 run with a parameterised case, a skip, a failure with its
# diagnostics and kernel messages between the KTAP lines.
RUN = """\
Linux version 6.1.0-test (root@build) (gcc 12.2.0) #1
random: crng init done
KTAP version 1
1..2
    KTAP version 1
    # Subtest: example
    1..4
    # example_simple_test: initializing
    ok 1 example_simple_test
    # example_skip_test: initializing
    # example_skip_test: You should not see a line below.
    ok 2 example_skip_test # SKIP this test should be skipped
        KTAP version 1
        # Subtest: example_params_test
    # example_params_test: initializing
        ok 1 example value 3
    # example_params_test: initializing
        ok 2 example value 2
    # example_params_test: pass:2 fail:0 skip:0 total:2
    ok 3 example_params_test
    # example_mark_skipped_test: initializing
    ok 4 example_mark_skipped_test # SKIP
# example: pass:2 fail:0 skip:2 total:4
ok 1 example
clocksource: Switched to clocksource tsc
    KTAP version 1
    # Subtest: bits-test
    1..2
    # genmask_test: EXPECTATION FAILED at lib/test_bits.c:16
    Expected 3ul == ((((int)(sizeof(struct { int:(-!!(__builtin_constant_p(1) ...
        3ul == 3 (0x3)
        GENMASK(1, 0) == 2 (0x2)
    not ok 1 genmask_test
    ok 2 genmask_ull_test
# bits-test: pass:1 fail:1 skip:0 total:2
# Totals: pass:3 fail:1 skip:2 total:6
not ok 2 bits-test
reboot: Restarting system
"""


def by_name(report):
    return {f"{c.suite}.{c.name}": c for c in report.cases}


def test_every_case_of_a_run_with_its_status_in_order():
    report = ktap.parse(RUN)
    assert report.found and report.planned == 2
    assert report.suites == ["example", "bits-test"]
    assert [(c.suite, c.name, c.status.value) for c in report.cases] == [
        ("example", "example_simple_test", "PASS"),
        ("example", "example_skip_test", "SKIP"),
        ("example", "example_params_test", "PASS"),
        ("example", "example_mark_skipped_test", "SKIP"),
        ("bits-test", "genmask_test", "FAIL"),
        ("bits-test", "genmask_ull_test", "PASS"),
    ]
    assert report.counts() == {
        "suites": 2,
        "cases": 6,
        "pass": 3,
        "fail": 1,
        "skip": 2,
        "error": 0,
    }


def test_a_skip_keeps_its_reason_and_the_lines_before_it():
    case = by_name(ktap.parse(RUN))["example.example_skip_test"]
    assert case.reason == "this test should be skipped"
    assert case.diagnostics == [
        "# example_skip_test: initializing",
        "# example_skip_test: You should not see a line below.",
    ]
    assert by_name(ktap.parse(RUN))["example.example_mark_skipped_test"].reason == ""


def test_a_parameterised_case_is_one_case_with_its_parameters_output():
    case = by_name(ktap.parse(RUN))["example.example_params_test"]
    assert case.status is Status.PASS
    assert "# example_params_test: pass:2 fail:0 skip:0 total:2" in case.diagnostics
    assert not any("ok 1" in d for d in case.diagnostics)  # passed parameters are no news


def test_a_failure_carries_its_diagnostic_lines_and_the_first_as_reason():
    case = by_name(ktap.parse(RUN))["bits-test.genmask_test"]
    assert case.reason == "# genmask_test: EXPECTATION FAILED at lib/test_bits.c:16"
    assert case.diagnostics[0] == case.reason
    assert case.diagnostics[2:] == ["    3ul == 3 (0x3)", "    GENMASK(1, 0) == 2 (0x2)"]
    # the next case starts with a clean slate
    assert by_name(ktap.parse(RUN))["bits-test.genmask_ull_test"].diagnostics == []


def test_the_verdict_names_the_count_and_the_first_failing_case():
    status, reason = ktap.parse(RUN).verdict()
    assert status is Status.FAIL
    assert reason == "1 of 6 KUnit cases failed; first: bits-test.genmask_test"


def test_a_failing_parameter_is_in_the_case_diagnostics():
    text = """\
KTAP version 1
1..1
    KTAP version 1
    # Subtest: linear-ranges-test
    1..1
        KTAP version 1
        # Subtest: range_test
    # range_test: EXPECTATION FAILED at lib/test_linear_ranges.c:120
        ok 1 low
        not ok 2 high
    # range_test: pass:1 fail:1 skip:0 total:2
    not ok 1 range_test
not ok 1 linear-ranges-test
"""
    (case,) = ktap.parse(text).cases
    assert case.status is Status.FAIL and case.name == "range_test"
    assert "not ok 2 high" in case.diagnostics
    assert case.reason.endswith("EXPECTATION FAILED at lib/test_linear_ranges.c:120")


def test_printk_time_stamps_and_carriage_returns_are_stripped():
    stamped = "".join(
        f"[{i:5d}.{i * 1234 % 1000000:06d}] {line}\r\n" for i, line in enumerate(RUN.splitlines())
    )
    assert stamped.startswith("[    0.000000] Linux version")
    plain, prefixed = ktap.parse(RUN), ktap.parse(stamped)
    assert [c.to_json() for c in prefixed.cases] == [c.to_json() for c in plain.cases]
    assert ktap.strip_prefix("[   12.345678][    T1]     ok 1 a") == "    ok 1 a"
    assert ktap.strip_prefix("[    0.5]     # x") == "    # x"


def test_a_constant_prefix_before_the_version_line_is_stripped_from_every_line():
    text = "".join(f"<6>{line}\n" for line in RUN.splitlines())
    assert [c.to_json() for c in ktap.parse(text).cases] == [
        c.to_json() for c in ktap.parse(RUN).cases
    ]


def test_a_crash_in_the_middle_of_a_suite_makes_the_running_case_an_error():
    text = """\
KTAP version 1
1..2
    KTAP version 1
    # Subtest: list-kernel-test
    1..3
    ok 1 list_add_test
    # list_del_test: about to crash
BUG: kernel NULL pointer dereference, address: 0000000000000008
#PF: supervisor write access in kernel mode
RIP: 0010:list_del_test+0x1d/0x90
Kernel panic - not syncing: Fatal exception
"""
    report = ktap.parse(text)
    assert [(c.name, c.status) for c in report.cases] == [
        ("list_add_test", Status.PASS),
        ("list_del_test", Status.ERROR),
    ]
    crashed = report.cases[-1]
    assert crashed.suite == "list-kernel-test"
    assert (
        crashed.reason == "crashed: BUG: kernel NULL pointer dereference, address: 0000000000000008"
    )
    assert crashed.diagnostics[0] == "# list_del_test: about to crash"
    assert crashed.diagnostics[-1] == "Kernel panic - not syncing: Fatal exception"
    status, reason = report.verdict()
    assert status is Status.FAIL
    assert reason.startswith("1 of 2 KUnit cases failed (crash: BUG: kernel NULL pointer")
    assert reason.endswith("first: list-kernel-test.list_del_test")


def test_a_console_that_ends_silently_mid_suite_names_the_case_by_number():
    text = "KTAP version 1\n1..1\n    # Subtest: s\n    1..2\n    ok 1 a\n"
    (_, lost) = ktap.parse(text).cases
    assert (lost.name, lost.status) == ("case 2", Status.ERROR)
    assert lost.reason == "no result: the console ended in this case"


def test_a_run_that_stops_between_suites_is_an_error():
    text = "KTAP version 1\n1..3\n    # Subtest: s\n    1..1\n    ok 1 a\nok 1 s\n"
    report = ktap.parse(text)
    assert report.verdict() == (Status.ERROR, "KTAP stopped after 1 of 3 suites")


def test_a_suite_that_fails_before_its_cases_is_one_failed_case():
    text = """\
KTAP version 1
1..1
    # s: # failed to initialize (-12)
not ok 1 s
"""
    (case,) = ktap.parse(text).cases
    assert (case.suite, case.name, case.status) == ("s", "s", Status.FAIL)
    assert case.reason == "# s: # failed to initialize (-12)"


def test_no_ktap_is_an_error_and_a_clean_run_passes():
    assert ktap.parse("Linux version 6.1\nKernel panic - not syncing: x\n").verdict() == (
        Status.ERROR,
        "no KTAP output on the console",
    )
    clean = RUN.replace("not ok 1 genmask_test", "ok 1 genmask_test").replace(
        "not ok 2 bits-test", "ok 2 bits-test"
    )
    assert ktap.parse(clean).verdict() == (
        Status.PASS,
        "2 suites, 6 cases: 4 passed, 2 skipped",
    )


def test_the_older_dash_form_and_a_todo_directive():
    text = "TAP version 14\n1..1\n    # Subtest: s\n    1..2\n    ok 1 - a\n"
    text += "    not ok 2 - b # TODO not done\nok 1 - s\n"
    report = ktap.parse(text)
    assert [(c.name, c.status, c.reason) for c in report.cases] == [
        ("a", Status.PASS, ""),
        ("b", Status.SKIP, "TODO not done"),
    ]


def test_to_json_is_the_shape_of_target_result_cases():
    case = ktap.parse(RUN).cases[1]
    assert case.to_json() == {
        "suite": "example",
        "name": "example_skip_test",
        "status": "SKIP",
        "reason": "this test should be skipped",
        "diagnostics": case.diagnostics,
    }


def test_a_real_uml_console():
    # kunit.log of matrices/kunit.yaml's um build of Debian's 6.1.y; the
    # tree's tools/testing/kunit/kunit.py parse says: Ran 92 tests: passed: 90, skipped: 2
    text = (Path(__file__).parent / "data" / "kunit" / "um-6.1.log").read_text()
    report = ktap.parse(text)
    assert report.counts() == {
        "suites": 12,
        "cases": 92,
        "pass": 90,
        "fail": 0,
        "skip": 2,
        "error": 0,
    }
    assert report.verdict() == (Status.PASS, "12 suites, 92 cases: 90 passed, 2 skipped")
    assert [c.name for c in report.cases if c.status is Status.SKIP] == [
        "example_skip_test",
        "example_mark_skipped_test",
    ]
    assert report.suites[-3:] == ["linear-ranges-test", "bits-test", "cmdline"]
    bits = [c.name for c in report.cases if c.suite == "bits-test"]
    assert bits == ["genmask_test", "genmask_ull_test", "genmask_input_check_test"]


def test_a_real_uml_console_cut_in_the_middle_of_a_suite():
    text = (Path(__file__).parent / "data" / "kunit" / "um-6.1.log").read_text()
    cut = text[: text.index("    ok 2 genmask_ull_test")]
    report = ktap.parse(cut + "Segfault with no mm\n")
    assert report.cases[-1].to_json() == {
        "suite": "bits-test",
        "name": "case 2",
        "status": "ERROR",
        "reason": "crashed: Segfault with no mm",
        "diagnostics": ["Segfault with no mm"],
    }
    assert report.verdict()[0] is Status.FAIL
