"""The kunit target on Debian's real linux-source-6.1 tree: matrices/kunit.yaml's
tinyconfig kernels with KUnit are built and run, and every KUnit case is
reported; the tree's own tools/testing/kunit/kunit.py reads the same console.

CI runs User-mode Linux (native gcc, no QEMU, the cheapest kernel to build);
PYTEST_KBUILD_KUNIT_ARCHES=um,x86_64 also boots x86_64 under QEMU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.support import ROOT, require_tools, run_pytest

KUNIT = ROOT / "matrices" / "kunit.yaml"
ARCHES = os.environ.get("PYTEST_KBUILD_KUNIT_ARCHES", "um").split(",")
TOOLS = {"um": ["gcc"], "x86_64": ["gcc", "qemu-system-x86_64"]}
# Real suites data/kunit/kunit.config turns on, beside KUnit's own.
REAL_SUITES = {"list-kunit-test", "hlist", "bits-test", "linear-ranges-test", "cmdline"}
SKIPPED = {"example_skip_test", "example_mark_skipped_test"}


@pytest.fixture(scope="module")
def ran(linux_tree, tmp_path_factory):
    require_tools("make", *(t for a in ARCHES for t in TOOLS[a]))
    work = tmp_path_factory.mktemp("kunit")
    proc = run_pytest(
        work,
        f"--kbuild-matrix={KUNIT}",
        f"--kbuild-tree={linux_tree}",
        "--kbuild-results=results",
        "--junitxml=junit.xml",
        "-k",
        " or ".join(f"{a}-gcc" for a in ARCHES),
        "-rA",
    )
    print(proc.stdout[-8000:])
    return work / "results", proc


def kunit_of(results, arch):
    build = results / "kunit" / f"{arch}-gcc-tinyconfig"
    meta = json.loads((build / "metadata.json").read_text())
    return build, meta["targets"]["kunit"], meta


@pytest.mark.parametrize("arch", ARCHES)
def test_every_kunit_case_is_reported_and_the_real_suites_pass(ran, arch):
    results, proc = ran
    build, kunit, meta = kunit_of(results, arch)
    assert kunit["status"] == "PASS", (kunit["reason"], kunit["errors"], proc.stdout[-3000:])
    cases = kunit["cases"]
    suites = {c["suite"] for c in cases}
    assert suites >= REAL_SUITES, suites
    for case in cases:
        want = "SKIP" if case["name"] in SKIPPED else "PASS"
        assert case["status"] == want, case
    assert {c["name"] for c in cases if c["suite"] == "example"} >= SKIPPED
    skip = next(c for c in cases if c["name"] == "example_skip_test")
    assert skip["reason"] == "this test should be skipped"
    assert "# example_skip_test: You should not see a line below." in skip["diagnostics"]
    facts = kunit["boot"]
    assert facts["ktap"]["cases"] == len(cases) and facts["ktap"]["skip"] == len(SKIPPED)
    assert kunit["reason"] == (
        f"{len(suites)} suites, {len(cases)} cases: {len(cases) - 2} passed, 2 skipped"
    )
    assert facts["exit_status"] == 0 and not facts["timed_out"]
    if arch == "um":
        assert facts["command"].startswith(str(build / "linux"))
    else:
        assert facts["qemu"].startswith("QEMU emulator version 7.")
        assert "-initrd" not in facts["command"]
    assert "kunit.log" in meta["artifacts"]
    print(
        f"{arch}: {len(suites)} suites, {len(cases)} cases, kunit {facts['seconds']} s, "
        f"kernel build {meta['targets']['kernel']['duration']} s"
    )


@pytest.mark.skipif("um" not in ARCHES, reason="PYTEST_KBUILD_KUNIT_ARCHES has no um")
def test_the_um_kernel_is_a_linux_program_that_runs(ran):
    """User-mode Linux, the one arch of issue 14 CI builds for real (native
    and the cheapest; alpha, armel, m68k, parisc64, hexagon, mips64 and
    powerpc64/le were built by hand, their data is unit-tested), read from
    the KUnit run's build rather than a build of its own: its kernel is an
    x86-64 host program that says its version without booting."""
    require_tools("file")
    results, _ = ran
    build, _, meta = kunit_of(results, "um")
    linux = build / "linux"
    desc = subprocess.run(["file", "-b", str(linux)], capture_output=True, text=True).stdout
    assert desc.startswith("ELF 64-bit LSB"), desc
    assert "x86-64" in desc and "executable" in desc, desc
    config = (build / "config").read_text()
    assert "CONFIG_UML=y\n" in config and "CONFIG_64BIT=y\n" in config
    assert os.access(linux, os.X_OK)
    version = subprocess.run([str(linux), "--version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith("6.1."), version
    assert meta["status"] == "PASS"
    assert meta["makevars"]["ARCH"] == "um" and meta["makevars"]["SUBARCH"] == "x86_64"
    assert "CROSS_COMPILE" not in meta["makevars"]
    assert meta["artifacts"]["linux"]["target"] == "kernel"


@pytest.mark.parametrize("arch", ARCHES)
def test_the_trees_kunit_parser_agrees_on_the_saved_console(ran, linux_tree, arch, tmp_path):
    results, _ = ran
    build, kunit, _ = kunit_of(results, arch)
    out = tmp_path / "kunit.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(linux_tree / "tools" / "testing" / "kunit" / "kunit.py"),
            "parse",
            f"--json={out}",
            str(build / "kunit.log"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},  # the tree stays untouched
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    groups = json.loads(out.read_text())["sub_groups"]
    # kunit.py: a suite's leaf cases are test_cases, a parameterised case a
    # sub_group of its parameters; pytest-kbuild reports either as one case.
    theirs = {}
    for g in groups:
        for case in g["test_cases"]:
            theirs[(g["name"], case["name"])] = case["status"]
        for sub in g["sub_groups"]:
            statuses = {c["status"] for c in sub["test_cases"]}
            theirs[(g["name"], sub["name"])] = "FAIL" if "FAIL" in statuses else "PASS"
    ours = {(c["suite"], c["name"]): c["status"] for c in kunit["cases"]}
    assert ours == theirs
    leaves = sum(len(g["test_cases"]) for g in groups)
    leaves += sum(len(s["test_cases"]) for g in groups for s in g["sub_groups"])
    assert f"Ran {leaves} tests" in proc.stdout
    print(f"{arch}: kunit.py parse: {len(groups)} suites, {len(theirs)} cases, {leaves} leaves")


def test_each_case_is_a_junit_testcase_and_in_the_terminal_summary(ran):
    # What CI shows: a testcase per KUnit case (classname the build's, name
    # suite.case), skips with KUnit's reason; pytest's counts and the
    # "kbuild cases (KUnit)" section of the terminal.
    results, proc = ran
    suite = ET.parse(results.parent / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    total = 0
    for arch in ARCHES:
        _, kunit, _ = kunit_of(results, arch)
        # The classname of the build's own targets (the matrix's path in it).
        classname = next(
            c.get("classname")
            for c in suite.iter("testcase")
            if c.get("name") == "kunit" and c.get("classname").endswith(f"{arch}-gcc-tinyconfig")
        )
        testcases = {
            c.get("name"): c for c in suite.iter("testcase") if c.get("classname") == classname
        }
        assert len(testcases) == len(kunit["cases"]) + 3  # and config, kernel, kunit
        for case in kunit["cases"]:
            testcase = testcases[f"{case['suite']}.{case['name']}"]
            skipped = testcase.find("skipped")
            assert (skipped is not None) == (case["status"] == "SKIP"), case
            assert testcase.find("failure") is None and testcase.find("error") is None
        assert testcases["example.example_skip_test"].find("skipped").get("message") == (
            "this test should be skipped"
        )
        total += len(kunit["cases"])
    skips = len(SKIPPED) * len(ARCHES)
    assert f"{total} cases ({total - skips} PASS, {skips} SKIP)" in proc.stdout
    assert "kbuild cases (KUnit)" in proc.stdout
    assert proc.returncode == 0, proc.stdout[-3000:]
