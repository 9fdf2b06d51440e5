"""A TuxSuite plan given as --kbuild-matrix, run for real on fakelinux."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.support import builds_by_id

PLAN = """
version: 1
name: small plan
description: kernel.org and Debian toolchains, a qemu test, a nightly
jobs:
- name: x86
  builds:
    - {target_arch: x86_64, toolchain: korg-gcc-12, kconfig: [defconfig, CONFIG_PRINTK=y],
       targets: [config, kernel]}
    - {target_arch: x86_64, toolchain: clang-16, kconfig: tinyconfig,
       make_variables: {LLVM: 1}, targets: [config, kernel, kselftest-merge]}
  test: {device: qemu-arm64, tests: [ltp-smoke]}
- name: arm64
  build: {target_arch: arm64, toolchain: gcc-12, kconfig: defconfig, kernel_image: vmlinux,
          targets: [kernel], environment: {KBUILD_BUILD_USER: plan}}
- name: nightly
  build: {target_arch: arm64, toolchain: clang-nightly, kconfig: defconfig, targets: [kernel]}
- name: url
  build: {target_arch: x86_64, toolchain: gcc-12, kconfig: "http://127.0.0.1:9/plan_defconfig",
          targets: [config]}
"""
GCC = "x86_64-korg-gcc-12-defconfig-x86"
CLANG = "x86_64-clang-16-tinyconfig-x86"
ARM = "arm64-gcc-12-defconfig-arm64"
NIGHTLY = "arm64-clang-nightly-defconfig-nightly"
URL = "x86_64-gcc-12-plan_defconfig-url"


@pytest.fixture
def plan(pytester, fakelinux):
    path = pytester.path / "plan.yaml"
    path.write_text(f"tree: {fakelinux}\n{PLAN}")
    return path


def outcomes(pytester):
    summary = json.loads((pytester.path / "kbuild-results" / "results.json").read_text())
    return {
        bid: {t: v["outcome"] for t, v in b["targets"].items()}
        for bid, b in builds_by_id(summary).items()
    }


def test_ids_carry_the_job(pytester, plan):
    result = pytester.runpytest("--kbuild-matrix=plan.yaml", "--collect-only", "-q")
    ids = [ln for ln in result.outlines if "::" in ln]
    assert ids == [
        f"plan.yaml::{NIGHTLY}::kernel",
        f"plan.yaml::{ARM}::kernel",
        f"plan.yaml::{CLANG}::config",
        f"plan.yaml::{CLANG}::kernel",
        f"plan.yaml::{CLANG}::boot",
        f"plan.yaml::{CLANG}::kselftest-merge",
        f"plan.yaml::{URL}::config",
        f"plan.yaml::{GCC}::config",
        f"plan.yaml::{GCC}::kernel",
        f"plan.yaml::{GCC}::boot",
    ]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_plan_runs(pytester, plan, xdist):
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=plan.yaml", "--junitxml=j.xml", "-o", "junit_family=xunit1", "-rs", *xdist
    )
    result.assert_outcomes(passed=5, skipped=4, errors=1)
    result.stdout.fnmatch_lines(
        [f"*{URL}::config ERROR: cannot fetch kconfig 'http://127.0.0.1:9/plan_defconfig': *"]
    )
    result.stdout.fnmatch_lines_random(
        [
            "SKIPPED*device qemu-arm64 boots arm64, not this x86_64 build*",
            "SKIPPED*TuxMake target kselftest-merge is not built by pytest-kbuild*",
            "SKIPPED*clang-nightly is a daily LLVM snapshot*",
        ]
    )
    assert outcomes(pytester)[GCC] == {"config": "passed", "kernel": "passed"}
    assert outcomes(pytester)[ARM] == {"kernel": "passed"}
    out = pytester.path / "kbuild-results" / "plan"
    gcc = json.loads((out / GCC / "metadata.json").read_text())
    assert gcc["matrix"]["plan"] == {
        "job": "x86",
        "toolchain": "kernel.org's gcc 12 is not packaged here; built with Debian's gcc-12",
        "devices": "qemu-arm64",
        "tests": "ltp-smoke: not run here (pytest-kbuild boots the kernel)",
    }
    assert gcc["toolchain"]["name"] == "gcc-12"
    assert "CONFIG_PRINTK=y" in (out / GCC / "config").read_text()
    clang = json.loads((out / CLANG / "metadata.json").read_text())
    assert clang["makevars"]["LLVM"] == "-16"  # LLVM=1 of the plan: clang-16's own tools
    arm = json.loads((out / ARM / "metadata.json").read_text())
    assert sorted(arm["artifacts"]) == ["config", "vmlinux"]  # kernel_image: not Image.gz
    assert (out / ARM / "vmlinux").is_file()
    # the reproducer builds that image too, and only that build's says so
    assert "--kernel-image=vmlinux" in arm["reproducer"].split()
    assert "--kernel-image" not in gcc["reproducer"]
    cases = ET.parse(pytester.path / "j.xml").getroot().findall(".//testcase")
    props = {
        (c.get("classname"), c.get("name")): {
            p.get("name"): p.get("value") for p in c.findall("properties/property")
        }
        for c in cases
    }
    kernel = props[(f"plan.{GCC}", "kernel")]
    assert kernel["job"] == "x86"
    assert kernel["plan_toolchain"].endswith("built with Debian's gcc-12")


def test_jobs_are_selected_by_glob_and_by_marker(pytester, plan):
    result = pytester.runpytest(
        "--kbuild-matrix=plan.yaml", "--kbuild-plan-job=arm*", "--collect-only", "-q"
    )
    assert [ln for ln in result.outlines if "::" in ln] == [f"plan.yaml::{ARM}::kernel"]
    result = pytester.runpytest(
        "--kbuild-matrix=plan.yaml", "-m", "kbuild(job='nightly')", "--collect-only", "-q"
    )
    assert [ln for ln in result.outlines if "::" in ln] == [f"plan.yaml::{NIGHTLY}::kernel"]


def test_a_bad_plan_is_a_collection_error_not_a_traceback(pytester, fakelinux):
    (pytester.path / "plan.yaml").write_text(
        f"tree: {fakelinux}\nversion: 1\njobs:\n- build: {{target_arch: arm64, toolchan: gcc}}\n"
    )
    result = pytester.runpytest("--kbuild-matrix=plan.yaml")
    result.stdout.fnmatch_lines(
        ["*plan.yaml:4: plan.jobs[[]0[]].build.toolchan: unknown key 'toolchan'; accepted: *"]
    )
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED
