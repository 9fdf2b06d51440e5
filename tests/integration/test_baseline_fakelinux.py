"""--kbuild-baseline and --kbuild-fail-on on fakelinux: a warning a change
brings is new (>>), one it removes is fixed, a build the baseline lacks is
said to be absent; fail-on fails the target but not its dependents."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support import builds_by_id

BASE = """
arch: [x86_64]
toolchain: [gcc]
targets: [config, kernel, modules]
"""
# The same build, now with a compiler warning in the kernel, and a build
# the baseline never had.
CHANGED = (
    BASE
    + """env: {WARN: kernel}
include:
  - {arch: arm64, toolchain: gcc, env: {WARN: kernel}, targets: [config, kernel]}
"""
)
X86 = "x86_64-gcc-defconfig"


def write(pytester, tree, body, name="m.yaml"):
    (pytester.path / name).write_text(f"tree: {tree}\n{body}")


def metadata(pytester, results, build=X86):
    return json.loads((pytester.path / results / "m" / build / "metadata.json").read_text())


@pytest.fixture
def baseline(pytester, fakelinux):
    """The results of the run before the change, in base/."""
    write(pytester, fakelinux, BASE)
    pytester.runpytest("--kbuild-matrix=m.yaml", "--kbuild-results=base").assert_outcomes(passed=3)
    return pytester.path / "base"


def test_a_new_warning_is_marked_counted_and_reported(pytester, fakelinux, baseline):
    write(pytester, fakelinux, CHANGED)
    result = pytester.runpytest(
        "--kbuild-matrix=m.yaml",
        f"--kbuild-baseline={baseline}",
        "--junitxml=j.xml",
        "-o",
        "junit_family=xunit1",
    )
    result.assert_outcomes(passed=5)  # fail-on never: reported, not failed
    result.stdout.fnmatch_lines(
        [
            "baseline: 1 new warning, 0 new errors, 0 fixed; 1 build not in it: arm64-gcc-defconfig",
            ">> scripts/inject/warn.c:*: warning: unused variable *fakelinux_injected_war*",
        ]
    )
    kernel = metadata(pytester, "kbuild-results")["targets"]["kernel"]
    assert kernel["baseline"]["new_warnings"] == 1 and kernel["baseline"]["unchanged"] == 0
    assert [d["new"] for d in kernel["diagnostics"]] == [True]
    arm64 = metadata(pytester, "kbuild-results", "arm64-gcc-defconfig")["targets"]["kernel"]
    assert arm64["baseline"]["absent"] == "build" and arm64["diagnostics"][0]["new"] is False
    summary = json.loads((pytester.path / "kbuild-results/results.json").read_text())
    assert summary["baseline"] == {
        "path": str(baseline),
        "new_warnings": 1,
        "new_errors": 0,
        "fixed": 0,
        "absent_builds": ["arm64-gcc-defconfig"],
    }
    assert builds_by_id(summary)[X86]["targets"]["kernel"]["new_warnings"] == 1
    case = next(
        c
        for c in ET.parse(pytester.path / "j.xml").iter("testcase")
        if c.get("name") == "kernel" and X86 in c.get("classname")
    )
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["new_warnings"] == "1" and props["baseline"] == "compared"
    assert ">> " in case.find("system-out").text
    groups = json.loads((pytester.path / "kbuild-results/diagnostics.json").read_text())
    assert groups["diagnostics"][0]["new_in"] == [X86]

    # The change reverted, against the changed run: the warning is fixed.
    write(pytester, fakelinux, BASE)
    again = pytester.runpytest(
        "--kbuild-matrix=m.yaml", "--kbuild-baseline=kbuild-results", "--kbuild-results=after"
    )
    again.assert_outcomes(passed=3)
    again.stdout.fnmatch_lines(["baseline: 0 new warnings, 0 new errors, 1 fixed"])
    fixed = metadata(pytester, "after")["targets"]["kernel"]["baseline"]["fixed_diagnostics"]
    assert [d["file"] for d in fixed] == ["scripts/inject/warn.c"]
    assert "fakelinux_injected_warning" in fixed[0]["message"]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_fail_on_new_warnings_fails_the_target_not_its_dependents(
    pytester, fakelinux, baseline, xdist
):
    write(pytester, fakelinux, CHANGED)
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml",
        f"--kbuild-baseline={baseline}",
        "--kbuild-fail-on=new-warnings",
        *xdist,
    )
    # x86_64's kernel has a new warning: FAIL; its modules still build.
    # arm64 is not in the baseline: nothing is known to be new, it passes.
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*{X86}::kernel FAIL: 1 new warning (fail-on new-warnings)",
            "  >> *scripts/inject/warn.c:*: warning: unused variable*",
            f"*reproduce: kbuild *--baseline={baseline}*--fail-on=new-warnings*",
            f"FAILED m.yaml::{X86}::kernel*",
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    kernel = metadata(pytester, "kbuild-results")["targets"]["kernel"]
    assert (kernel["status"], kernel["failed_on"]) == ("FAIL", "new-warnings")
    assert metadata(pytester, "kbuild-results")["targets"]["modules"]["status"] == "PASS"
    # a policy failure still keeps what make built
    assert "bzImage" in kernel["artifacts"]


def test_fail_on_warnings_as_a_matrix_key_and_in_kbuild(pytester, fakelinux, baseline):
    write(pytester, fakelinux, BASE + "env: {WARN: kernel}\nfail_on: warnings\n")
    # a subprocess: an in-process rerun re-imports the plugin's modules
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([f"*{X86}::kernel FAIL: 1 warning (fail-on warnings)"])
    # kbuild, against the baseline: exit 2 as for any failed target
    kbuild = Path(sys.executable).with_name("kbuild")
    args = [str(kbuild), "-C", str(fakelinux), "-a", "x86_64", "-o", str(pytester.path / "k")]
    env = {"WARN": "kernel", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [*args, "--baseline", str(baseline), "--fail-on", "new-warnings", "config", "kernel"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "I: kernel: FAIL" in proc.stdout and "E:   >> " in proc.stdout
    bad = subprocess.run(
        [*args, "--fail-on", "new-warnings", "config"], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 1 and "needs a baseline" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--kbuild-baseline=nowhere"],
            "--kbuild-baseline: '*nowhere' does not exist; accepted: *",
        ),
        (["--kbuild-fail-on=typo"], "*--kbuild-fail-on: fail-on 'typo' is not known; accepted: *"),
        (["--kbuild-fail-on=new-warnings"], "*new-warnings needs a baseline*"),
    ],
    ids=["missing-baseline", "typo", "no-baseline"],
)
def test_bad_baseline_input_is_a_usage_error(pytester, fakelinux, args, message):
    write(pytester, fakelinux, BASE)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}"])
    assert "Traceback" not in result.stderr.str()
