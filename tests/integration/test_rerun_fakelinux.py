"""Re-running failures: --lf, --ff and -k with whole builds, serial and under xdist."""

from __future__ import annotations

import json
import re
import shlex

import pytest

THREE_BUILDS = (
    "arch: [arm64, riscv, x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel, modules]\n"
)
XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])


def write_matrix(pytester, tree, body):
    (pytester.path / "m.yaml").write_text(f"tree: {tree}\n{body}")


def targets_run(pytester, build):
    """Targets in the order the last run of *build* ran them (its build.log)."""
    log = (pytester.path / "kbuild-results/m" / build / "build.log").read_text()
    return re.findall(r"^# target (\S+)", log, re.M)


def statuses(pytester, build):
    meta = json.loads((pytester.path / "kbuild-results/m" / build / "metadata.json").read_text())
    return {t: v["status"] for t, v in meta["targets"].items()}


def ran(result):
    """(worker or '', node id, outcome) of every item, in the order reported."""
    rx = re.compile(
        r"^(?:\[(gw\d+)\] \[\s*\d+%\] (PASSED|FAILED|SKIPPED|ERROR) (\S+)"
        r"|(\S+::\S+::\S+) (PASSED|FAILED|SKIPPED|ERROR))"
    )
    out = []
    for line in result.outlines:
        m = rx.match(line)
        if m and m.group(1):
            out.append((m.group(1), m.group(3), m.group(2)))
        elif m:
            out.append(("", m.group(4), m.group(5)))
    return out


def deselected(n, xdist):
    # Under xdist the workers deselect; the controller's summary does not count them.
    return {} if xdist else {"deselected": n}


def fail_x86_64_kernel(pytester, monkeypatch, xdist):
    """A full run in which only x86_64's kernel fails; the others pass."""
    monkeypatch.setenv("FAIL", "kernel")
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-k", "x86_64", *xdist)
    monkeypatch.delenv("FAIL")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-k", "not x86_64", *xdist)
    result.assert_outcomes(passed=6, **deselected(3, xdist))
    failed = json.loads((pytester.path / ".pytest_cache/v/cache/lastfailed").read_text())
    assert list(failed) == ["m.yaml::x86_64-gcc-defconfig::kernel"]


@XDIST
def test_lf_reruns_the_failed_target_and_its_dependencies(pytester, fakelinux, monkeypatch, xdist):
    write_matrix(pytester, fakelinux, THREE_BUILDS)
    fail_x86_64_kernel(pytester, monkeypatch, xdist)
    arm64_log = (pytester.path / "kbuild-results/m/arm64-gcc-defconfig/build.log").stat()
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--lf", "-v", *xdist)
    result.assert_outcomes(passed=1, **deselected(8, xdist))
    assert [(n, o) for _, n, o in ran(result)] == [
        ("m.yaml::x86_64-gcc-defconfig::kernel", "PASSED")
    ]
    # config, deselected, ran again in kernel's setup: a fresh build directory.
    assert targets_run(pytester, "x86_64-gcc-defconfig") == ["config", "kernel"]
    assert statuses(pytester, "x86_64-gcc-defconfig") == {"config": "PASS", "kernel": "PASS"}
    again = (pytester.path / "kbuild-results/m/arm64-gcc-defconfig/build.log").stat()
    assert again.st_mtime_ns == arm64_log.st_mtime_ns  # the passed builds did not run
    # Nothing failed: the next --lf has nothing to rerun.
    assert json.loads((pytester.path / ".pytest_cache/v/cache/lastfailed").read_text()) == {}


@XDIST
def test_lf_reruns_targets_that_a_failed_dependency_skipped(
    pytester, fakelinux, monkeypatch, xdist
):
    write_matrix(
        pytester,
        fakelinux,
        "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel, modules]\n",
    )
    monkeypatch.setenv("FAIL", "config")
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", *xdist).assert_outcomes(
        failed=1, skipped=2
    )
    monkeypatch.delenv("FAIL")
    # Rerunning config alone would leave kernel and modules never built.
    failed = json.loads((pytester.path / ".pytest_cache/v/cache/lastfailed").read_text())
    assert sorted(failed) == [
        f"m.yaml::x86_64-gcc-defconfig::{t}" for t in ("config", "kernel", "modules")
    ]
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--lf", *xdist)
    result.assert_outcomes(passed=3)
    assert targets_run(pytester, "x86_64-gcc-defconfig") == ["config", "kernel", "modules"]


def test_ff_runs_failed_builds_first_each_whole_and_in_order(pytester, fakelinux, monkeypatch):
    write_matrix(pytester, fakelinux, THREE_BUILDS)
    fail_x86_64_kernel(pytester, monkeypatch, [])
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--ff", "-v")
    result.assert_outcomes(passed=9)
    # The failed build first, its targets in dependency order, then the others.
    assert [n for _, n, _ in ran(result)] == [
        f"m.yaml::{b}-gcc-defconfig::{t}"
        for b in ("x86_64", "arm64", "riscv")
        for t in ("config", "kernel", "modules")
    ]
    # modules ran in x86_64's build directory after kernel: not torn down between.
    assert statuses(pytester, "x86_64-gcc-defconfig") == {
        "config": "PASS",
        "kernel": "PASS",
        "modules": "PASS",
    }


def test_ff_under_xdist_hands_out_failed_builds_first(pytester, fakelinux, monkeypatch):
    write_matrix(pytester, fakelinux, THREE_BUILDS)
    fail_x86_64_kernel(pytester, monkeypatch, [])
    # Equal estimates: the scheduler's order is arm64, riscv, x86_64, so that
    # without --ff x86_64 is the second build of its worker.
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--ff", "-v", "-n", "2")
    result.assert_outcomes(passed=9)
    items = ran(result)
    worker = next(w for w, n, _ in items if "x86_64" in n)
    mine = [n for w, n, _ in items if w == worker]
    assert mine[:3] == [
        f"m.yaml::x86_64-gcc-defconfig::{t}" for t in ("config", "kernel", "modules")
    ]
    assert targets_run(pytester, "x86_64-gcc-defconfig") == ["config", "kernel", "modules"]
    assert statuses(pytester, "x86_64-gcc-defconfig")["modules"] == "PASS"


@XDIST
def test_k_on_one_build_and_target_with_the_scheduler(pytester, fakelinux, xdist):
    write_matrix(pytester, fakelinux, THREE_BUILDS)
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "-k", "riscv and kernel", "-v", *xdist
    )
    result.assert_outcomes(passed=1, **deselected(8, xdist))
    assert targets_run(pytester, "riscv-gcc-defconfig") == ["config", "kernel"]
    assert not (pytester.path / "kbuild-results/m/arm64-gcc-defconfig").exists()


def test_a_target_skipped_by_its_precondition_is_not_rerun_by_lf(pytester, fakelinux):
    write_matrix(
        pytester,
        fakelinux,
        "arch: x86_64\ntoolchain: gcc\nkconfig: tinyconfig\ntargets: [config, modules]\n",
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*modules needs CONFIG_MODULES*"])
    lastfailed = pytester.path / ".pytest_cache/v/cache/lastfailed"
    assert not lastfailed.exists() or json.loads(lastfailed.read_text()) == {}


def test_the_rerun_hint_selects_exactly_the_failed_target(pytester, fakelinux):
    """A failure's ``rerun:`` line is its node id: ``-k 'arm64-gcc-defconfig
    and kernel'`` would also pick debugkernel and the -kasan build."""
    write_matrix(
        pytester,
        fakelinux,
        "arch: [arm64]\ntoolchain: [gcc]\nenv: {FAIL: kernel}\n"
        "targets: [config, kernel, debugkernel]\ninclude:\n"
        "  - {arch: arm64, toolchain: gcc, name: kasan, targets: [config, kernel, debugkernel]}\n",
    )
    first = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    hint = next(ln for ln in first.outlines if ln.startswith("rerun: ") and "::kernel" in ln)
    assert hint == "rerun: pytest --kbuild-matrix=m.yaml m.yaml::arm64-gcc-defconfig::kernel"
    again = pytester.runpytest_subprocess(*shlex.split(hint)[2:], "-v")
    again.assert_outcomes(failed=1)
    assert [node for _, node, _ in ran(again)] == ["m.yaml::arm64-gcc-defconfig::kernel"]
