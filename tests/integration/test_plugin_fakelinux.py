"""The whole plugin, driven through pytester, on a read-only fakelinux copy."""

from __future__ import annotations

import json
import tarfile
import xml.etree.ElementTree as ET

import pytest

ALL_X86 = """
arch: [x86_64]
toolchain: [gcc]
kconfig: [defconfig]
"""


def write_matrix(pytester, tree, body, name="m.yaml"):
    path = pytester.path / name
    path.write_text(f"tree: {tree}\n{body}")
    return path


def results_of(pytester, matrix="m"):
    summary = json.loads((pytester.path / "kbuild-results" / "results.json").read_text())
    return {
        bid: {t: v["outcome"] for t, v in b["targets"].items()}
        for bid, b in summary["builds"].items()
    }


def test_node_ids_are_matrix_build_target(pytester, fakelinux):
    write_matrix(pytester, fakelinux, ALL_X86)
    result = pytester.runpytest("--kbuild-matrix=m.yaml", "--collect-only", "-q")
    ids = [ln for ln in result.outlines if "::" in ln]
    assert ids == [
        f"m.yaml::x86_64-gcc-defconfig::{t}"
        for t in ("config", "kernel", "xipkernel", "debugkernel", "modules", "dtbs", "headers")
    ]


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_full_build_outcomes_junit_and_results_tree(pytester, fakelinux, xdist):
    write_matrix(
        pytester, fakelinux, "arch: [x86_64, arm64]\ntoolchain: [gcc]\nkconfig: [defconfig]\n"
    )
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--junitxml=j.xml", "-rs", *xdist
    )
    result.assert_outcomes(passed=11, skipped=3)
    assert results_of(pytester) == {
        "x86_64-gcc-defconfig": {
            "config": "passed",
            "kernel": "passed",
            "xipkernel": "skipped",
            "debugkernel": "passed",
            "modules": "passed",
            "dtbs": "skipped",
            "headers": "passed",
        },
        "arm64-gcc-defconfig": {
            "config": "passed",
            "kernel": "passed",
            "xipkernel": "skipped",
            "debugkernel": "passed",
            "modules": "passed",
            "dtbs": "passed",
            "headers": "passed",
        },
    }
    out = pytester.path / "kbuild-results" / "m" / "x86_64-gcc-defconfig"
    for name in (
        "build.log",
        "metadata.json",
        "config",
        "bzImage",
        "vmlinux.xz",
        "System.map",
        "modules.tar.xz",
        "headers.tar.xz",
    ):
        assert (out / name).is_file(), name
    with tarfile.open(out / "modules.tar.xz") as tar:
        assert any(n.endswith(".ko") and n.startswith("lib/modules/") for n in tar.getnames())
    with tarfile.open(pytester.path / "kbuild-results/m/arm64-gcc-defconfig/dtbs.tar.xz") as tar:
        assert any(n.startswith("dtbs/") and n.endswith(".dtb") for n in tar.getnames())
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "PASS" and meta["toolchain"]["version"].startswith("gcc")
    assert meta["targets"]["kernel"]["status"] == "PASS"
    assert meta["artifacts"]["bzImage"]["sha256"]
    cases = ET.parse(pytester.path / "j.xml").getroot().findall(".//testcase")
    assert len(cases) == 14
    props = {p.get("name"): p.get("value") for p in cases[0].findall("properties/property")}
    assert props["arch"] in ("x86_64", "arm64") and props["toolchain"] == "gcc"
    assert props["reproducer"].startswith("kbuild --directory=")


def test_serial_and_xdist_results_are_equal(pytester, fakelinux):
    write_matrix(
        pytester,
        fakelinux,
        "arch: [x86_64, arm64, riscv]\ntoolchain: [gcc]\nkconfig: [defconfig, tinyconfig]\n",
    )
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    serial = results_of(pytester)
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-n", "2")
    assert results_of(pytester) == serial
    assert len(serial) == 6


def test_compiler_error_fails_kernel_with_first_error_and_reproducer(
    pytester, fakelinux, monkeypatch
):
    monkeypatch.setenv("FAIL", "kernel")
    write_matrix(pytester, fakelinux, ALL_X86 + "targets: [config, kernel, modules]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--junitxml=j.xml")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.re_match_lines(
        [r".*\.c:\d+:\d+: error: .*", r"log: .*build\.log", r"reproduce: kbuild .*"]
    )
    failure = (
        ET.parse(pytester.path / "j.xml").getroot().find(".//testcase[@name='kernel']/failure")
    )
    assert "error:" in failure.get("message") and "build.log" in failure.get("message")


def test_failed_config_skips_dependents_naming_it(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("FAIL", "config")
    write_matrix(pytester, fakelinux, ALL_X86 + "targets: [config, kernel, headers]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-rs")
    result.assert_outcomes(failed=1, skipped=2)
    result.stdout.fnmatch_lines(["*dependency config did not pass*"])


def test_dropped_literal_option_fails_config(pytester, fakelinux):
    write_matrix(
        pytester,
        fakelinux,
        ALL_X86 + "targets: [config]\nkconfig_add: [CONFIG_MODULES=y, CONFIG_NO_SUCH_SYMBOL=y]\n",
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*CONFIG_NO_SUCH_SYMBOL=y was asked for, but the final .config is not set*"]
    )


def test_k_on_a_target_still_runs_its_dependency(pytester, fakelinux):
    write_matrix(pytester, fakelinux, ALL_X86)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-k", "x86_64 and modules")
    result.assert_outcomes(passed=1, deselected=6)
    meta = json.loads(
        (pytester.path / "kbuild-results/m/x86_64-gcc-defconfig/metadata.json").read_text()
    )
    assert meta["targets"]["config"]["status"] == "PASS"
    assert meta["targets"]["modules"]["status"] == "PASS"


def test_excluded_build_is_skipped_with_its_reason(pytester, fakelinux):
    write_matrix(
        pytester,
        fakelinux,
        "arch: [x86_64, arm64]\ntoolchain: [gcc]\ntargets: [config]\n"
        "exclude:\n  - {arch: arm64, reason: no arm64 boards in this lab}\n",
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*excluded by matrix.exclude[[]0[]]: no arm64 boards in this lab*"]
    )


def test_bad_matrix_is_a_collection_error_without_traceback(pytester, fakelinux):
    write_matrix(pytester, fakelinux, "arch: [x86_64, arm46]\ntoolchain: [gcc]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    assert result.ret == 2
    result.stdout.fnmatch_lines(
        ["*m.yaml:2: matrix.arch[[]1[]]: unknown arch 'arm46'; known: *arm64*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_directory_that_is_not_a_kernel_tree(pytester):
    (pytester.path / "empty").mkdir()
    write_matrix(pytester, "empty", "arch: [x86_64]\ntoolchain: [gcc]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*is not a kernel tree: missing Makefile, Kconfig, Kbuild*"])


def test_missing_matrix_file_is_a_usage_error(pytester):
    result = pytester.runpytest_subprocess("--kbuild-matrix=nope.yaml")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--kbuild-matrix: matrix file *nope.yaml* does not exist*"])


def test_missing_toolchain_is_an_error_naming_the_package(pytester, fakelinux):
    write_matrix(pytester, fakelinux, "arch: [x86_64]\ntoolchain: [gcc-8]\ntargets: [config]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*toolchain gcc-8 for x86_64*'gcc-8' not found on PATH; on Debian install: gcc-8*"]
    )
    assert (pytester.path / "kbuild-results/m/x86_64-gcc-8-defconfig/metadata.json").is_file()


def test_warnings_pass_and_are_counted(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("WARN", "kernel")
    write_matrix(pytester, fakelinux, ALL_X86 + "targets: [config, kernel]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(passed=2)
    meta = json.loads(
        (pytester.path / "kbuild-results/m/x86_64-gcc-defconfig/metadata.json").read_text()
    )
    assert meta["targets"]["kernel"]["warnings"] >= 1


def test_fakelinux_images_match_the_arch_data():
    """fakelinux stands in for the real tree only if it puts images where the
    arch files say (mips: the arch file builds plain vmlinux, which fakelinux has)."""
    import re

    from pytest_kbuild import definitions
    from pytest_kbuild.arch import Arch
    from tests.support import FAKELINUX

    for name in definitions.available("arch"):
        arch = Arch.load(name)
        text = (FAKELINUX / "arch" / arch.srcarch / "Makefile").read_text()
        image = re.search(r"^KBUILD_IMAGE\s*:=\s*(\S+)", text, re.M).group(1)
        has_dts = re.search(r"^dtbs\s*:=", text, re.M) is not None
        if arch.kernel_image != "vmlinux":
            assert image == arch.kernel_image_path, name
        assert has_dts == arch.dtbs, name


def test_kconfig_sources_in_tree_path_local_file_fragment_target_and_make(pytester, fakelinux):
    (pytester.path / "local.config").write_text("CONFIG_LOG_BUF_SHIFT=16\n")
    write_matrix(
        pytester,
        fakelinux,
        "arch: x86_64\ntoolchain: gcc\nkconfig: arch/x86/configs/x86_64_defconfig\ntargets: [config, modules]\n"
        "kconfig_add: [fake_modules.config, local.config, 'make:debug.config', '# CONFIG_FAKE_DRIVER2 is not set']\n",
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(passed=2)
    out = pytester.path / "kbuild-results/m/x86_64-gcc-x86_64_defconfig"
    config = (out / "config").read_text()
    assert "CONFIG_FAKE_DRIVER=m" in config and "CONFIG_LOG_BUF_SHIFT=16" in config
    assert "CONFIG_FAKE_DRIVER2=m" not in config
    meta = json.loads((out / "metadata.json").read_text())
    assert [s["kind"] for s in meta["kconfig_sources"]] == [
        "in-tree file",
        "make target",
        "file",
        "make target",
        "literal",
    ]
    log = (out / "build.log").read_text()
    assert (
        "make --silent --keep-going" in log
        and " fake_modules.config" in log
        and " debug.config" in log
    )
    assert "merge_config.sh -m -O" in log and log.rstrip().count("olddefconfig") >= 1


def test_git_tree_is_described_in_metadata(pytester, tmp_path):
    import shutil
    import subprocess

    from tests.support import FAKELINUX

    tree = tmp_path / "gittree"
    shutil.copytree(FAKELINUX, tree)
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "v6.1"], check=True)
    subprocess.run(
        [*git, "tag", "-a", "-m", "v6.1-fake", "v6.1-fake"], check=True
    )  # kernel tags are annotated
    write_matrix(pytester, tree, "arch: x86_64\ntoolchain: gcc\ntargets: [config]\n")
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml").assert_outcomes(passed=1)
    meta = json.loads(
        (pytester.path / "kbuild-results/m/x86_64-gcc-defconfig/metadata.json").read_text()
    )
    assert meta["tree"]["kernelversion"] == "6.1.0"
    assert meta["tree"]["git"]["describe"] == "v6.1-fake"
    assert len(meta["tree"]["git"]["commit"]) == 40


def test_minus_k_with_a_build_id_selects_one_combination(pytester, fakelinux):
    write_matrix(
        pytester, fakelinux, "arch: [x86_64, arm64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n"
    )
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "-k", "arm64-gcc", "--collect-only", "-q"
    )
    assert [ln for ln in result.outlines if "::" in ln] == [
        "m.yaml::arm64-gcc-defconfig::config",
        "m.yaml::arm64-gcc-defconfig::kernel",
    ]


def test_xdist_starts_the_longest_remembered_build_first(pytester, fakelinux):
    write_matrix(
        pytester, fakelinux, "arch: [x86_64, arm64, riscv]\ntoolchain: [gcc]\ntargets: [config]\n"
    )
    # A first run remembers durations in pytest's cache...
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-n", "1").assert_outcomes(passed=3)
    cache = json.loads((pytester.path / ".pytest_cache/v/kbuild/durations").read_text())
    assert set(cache) == {f"m.yaml::{a}-gcc-defconfig" for a in ("x86_64", "arm64", "riscv")}
    # ...which the scheduler uses: make riscv the longest, then x86_64.
    cache.update({"m.yaml::riscv-gcc-defconfig": 500.0, "m.yaml::x86_64-gcc-defconfig": 300.0})
    (pytester.path / ".pytest_cache/v/kbuild/durations").write_text(json.dumps(cache))
    pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "-n", "1", "--junitxml=j.xml"
    ).assert_outcomes(passed=3)
    order = [
        c.get("classname") for c in ET.parse(pytester.path / "j.xml").getroot().iter("testcase")
    ]
    assert order == [
        "m.yaml.riscv-gcc-defconfig",
        "m.yaml.x86_64-gcc-defconfig",
        "m.yaml.arm64-gcc-defconfig",
    ]


def test_n_auto_gives_one_worker_per_two_cpus(pytester, fakelinux):
    import os

    write_matrix(pytester, fakelinux, "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-n", "auto")
    workers = max(1, (os.cpu_count() or 1) // 2)
    result.stdout.fnmatch_lines([f"created: {workers}/{workers} worker*"])
    result.assert_outcomes(passed=1)
