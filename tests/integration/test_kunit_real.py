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

import pytest

from tests.support import ROOT, require_tools, run_pytest

pytestmark = pytest.mark.realkernel

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
