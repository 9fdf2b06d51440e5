"""Toolchains from a directory (llvm@DIR, gcc@DIR) through the whole plugin
on a read-only fakelinux copy, whose compiler really runs: directories of
symbolic links to Debian's clang-16 and aarch64 gcc, laid out as kernel.org's
tarballs are."""

from __future__ import annotations

import json
import subprocess
import sys

from pytest_kbuild import Build
from tests.support import gcc_dir, llvm_dir, old_gcc_dir


def write_matrix(pytester, tree, body):
    (pytester.path / "m.yaml").write_text(f"tree: {tree}\nkconfig: [tinyconfig]\n{body}")


def metadata(pytester, build_id):
    folder = pytester.path / "kbuild-results" / "m" / build_id
    return json.loads((folder / "metadata.json").read_text()), (folder / "build.log").read_text()


def test_an_llvm_directory_builds_and_is_recorded(pytester, fakelinux, tmp_path):
    llvm = llvm_dir(tmp_path / "llvm-16.0.6-x86_64" / "bin")
    write_matrix(
        pytester, fakelinux, f"arch: [arm64]\ntoolchain: [llvm@{llvm}]\ntargets: [config, kernel]\n"
    )
    result = pytester.runpytest("--kbuild-matrix=m.yaml", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*m.yaml::arm64-llvm-16-tinyconfig::kernel PASSED*"])
    meta, log = metadata(pytester, "arm64-llvm-16-tinyconfig")
    tc = meta["toolchain"]
    assert tc["name"] == "llvm-16" and tc["path"] == str(llvm)
    assert tc["compiler"] == f"{llvm}/clang"
    assert tc["version_number"].startswith("16.") and "clang version 16." in tc["version"]
    assert tc["minimum_version"] == "11.0.0"  # fakelinux's scripts/min-tool-version.sh llvm
    assert meta["makevars"]["LLVM"] == f"{llvm}/"
    assert f" LLVM={llvm}/ CC={llvm}/clang " in log
    assert f"--toolchain=llvm-16@{llvm}" in meta["reproducer"]


def test_a_kernel_org_gcc_directory_builds_with_its_prefix(pytester, fakelinux, tmp_path):
    korg = gcc_dir(tmp_path / "gcc-12.2.0-nolibc" / "aarch64-linux" / "bin")
    write_matrix(
        pytester,
        fakelinux,
        f"arch: [arm64]\ntoolchain: [{{name: gcc-korg, path: {korg}}}]\n"
        "targets: [config, kernel]\n",
    )
    result = pytester.runpytest("--kbuild-matrix=m.yaml")
    result.assert_outcomes(passed=2)
    meta, log = metadata(pytester, "arm64-gcc-korg-tinyconfig")
    assert meta["toolchain"]["path"] == str(korg)
    assert meta["toolchain"]["compiler"] == f"{korg}/aarch64-linux-gcc"
    assert meta["toolchain"]["version"].startswith("aarch64-linux-gcc ")
    assert f" CROSS_COMPILE={korg}/aarch64-linux- CC={korg}/aarch64-linux-gcc " in log
    assert "CROSS_COMPILE_COMPAT" not in log
    assert f"--toolchain=gcc-korg@{korg}" in meta["reproducer"]


def test_a_missing_directory_is_a_collection_error_without_traceback(pytester, fakelinux, tmp_path):
    missing = tmp_path / "llvm-21" / "bin"
    write_matrix(pytester, fakelinux, f"arch: [arm64]\ntoolchain: [gcc, llvm@{missing}]\n")
    result = pytester.runpytest("--kbuild-matrix=m.yaml")
    assert result.ret != 0
    out = result.stdout.str()
    assert (
        f"m.yaml:4: matrix.toolchain[1]: toolchain 'llvm@{missing}': {missing} is not a "
        "directory; llvm@DIR names a directory holding clang\n"
    ) in out
    assert "Traceback" not in out


def test_a_compiler_too_old_for_the_tree_errors_before_make(pytester, fakelinux, tmp_path):
    old = old_gcc_dir(tmp_path / "gcc-4.9" / "bin")
    write_matrix(
        pytester, fakelinux, f"arch: [x86_64]\ntoolchain: [gcc@{old}]\ntargets: [config]\n"
    )
    result = pytester.runpytest("--kbuild-matrix=m.yaml", "-rE")
    result.assert_outcomes(errors=1)
    why = (
        f"toolchain gcc-4@{old} for x86_64: version 4.9.4 is older than 5.1.0, the minimum "
        f"the tree {fakelinux} (its scripts/min-tool-version.sh gcc) accepts; use a newer compiler"
    )
    result.stdout.fnmatch_lines([f"*{why}*"])
    meta, log = metadata(pytester, "x86_64-gcc-4-tinyconfig")
    assert meta["status"] == "ERROR" and meta["error"] == why
    assert "$ make" not in log  # nothing was built


KBUILD = [sys.executable, "-c", "from pytest_kbuild.cli import kbuild_main; exit(kbuild_main())"]


def test_kbuild_takes_a_directory_and_its_reproducer_repeats_it(fakelinux, tmp_path):
    korg = gcc_dir(tmp_path / "bin")
    out = tmp_path / "o"
    argv = [f"--directory={fakelinux}", "-a", "arm64", "-k", "tinyconfig", f"--output-dir={out}"]
    done = subprocess.run(
        [*KBUILD, *argv, f"--toolchain=gcc@{korg}", "config"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    meta = json.loads((out / "metadata.json").read_text())
    name = meta["toolchain"]["name"]
    assert name.startswith("gcc-") and meta["build_id"] == f"arm64-{name}-tinyconfig"
    assert f"--toolchain={name}@{korg}" in done.stdout  # the reproducer's line
    missing = subprocess.run(
        [*KBUILD, *argv, f"--toolchain=gcc@{tmp_path / 'none'}", "config"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert f"{tmp_path / 'none'} is not a directory; gcc@DIR names a directory holding " in (
        missing.stdout + missing.stderr
    )


def test_the_python_api_takes_the_mapping(fakelinux, tmp_path):
    llvm = llvm_dir(tmp_path / "bin")
    build = Build(
        fakelinux,
        target_arch="arm64",
        toolchain={"name": "llvm-tip", "path": str(llvm)},
        kconfig="tinyconfig",
        targets=["config"],
        output_dir=tmp_path / "o",
    )
    result = build.run()
    assert build.id == "arm64-llvm-tip-tinyconfig"
    assert result.status.value == "PASS"
    assert result.record.toolchain["path"] == str(llvm)
