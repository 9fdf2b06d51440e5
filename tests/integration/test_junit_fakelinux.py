"""What CI systems read from a run: the kbuild marker for -m, and the JUnit
XML that GitLab and Jenkins show (classnames, <system-out>)."""

from __future__ import annotations

import pytest

MATRIX = """
arch: [x86_64, arm, arm64]
toolchain: [gcc-12, clang-16]
kconfig: [defconfig]
targets: [config, kernel, modules]
"""

# Keyword arguments in -m expressions came with pytest 8.3.0; before, the
# expression is a usage error.
needs_marker_kwargs = pytest.mark.skipif(
    pytest.version_tuple < (8, 3), reason="-m with marker keyword arguments needs pytest >= 8.3"
)


def write_matrix(pytester, tree, body, name="m.yaml"):
    path = pytester.path / name
    path.write_text(f"tree: {tree}\n{body}")
    return path


def collected(result):
    return [ln for ln in result.outlines if "::" in ln]


def test_markers_lists_kbuild(pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(
        ["@pytest.mark.kbuild(arch, toolchain, kconfig, target, build_id):*"]
    )


@needs_marker_kwargs
def test_m_kbuild_arch_selects_exactly(pytester, fakelinux):
    write_matrix(pytester, fakelinux, MATRIX)
    result = pytester.runpytest(
        "--kbuild-matrix=m.yaml", "--collect-only", "-q", "-m", "kbuild(arch='arm')"
    )
    assert collected(result) == [
        f"m.yaml::arm-{tc}-defconfig::{t}"
        for tc in ("clang-16", "gcc-12")
        for t in ("config", "kernel", "modules")
    ]
    # -k is a substring match of the node id: arm picks arm64 too.
    by_k = pytester.runpytest("--kbuild-matrix=m.yaml", "--collect-only", "-q", "-k", "arm")
    assert len(collected(by_k)) == 12


@needs_marker_kwargs
def test_m_kbuild_toolchain_and_target(pytester, fakelinux):
    write_matrix(pytester, fakelinux, MATRIX)
    result = pytester.runpytest(
        "--kbuild-matrix=m.yaml",
        "--collect-only",
        "-q",
        "-m",
        "kbuild(toolchain='clang-16', target='modules')",
    )
    assert collected(result) == [
        f"m.yaml::{a}-clang-16-defconfig::modules" for a in ("arm", "arm64", "x86_64")
    ]


@needs_marker_kwargs
def test_m_kbuild_kconfig_and_build_id(pytester, fakelinux):
    write_matrix(pytester, fakelinux, MATRIX.replace("[defconfig]", "[defconfig, tinyconfig]"))
    result = pytester.runpytest(
        "--kbuild-matrix=m.yaml",
        "--collect-only",
        "-q",
        "-m",
        "kbuild(build_id='x86_64-gcc-12-tinyconfig') and not kbuild(target='config')",
    )
    assert collected(result) == [
        "m.yaml::x86_64-gcc-12-tinyconfig::kernel",
        "m.yaml::x86_64-gcc-12-tinyconfig::modules",
    ]


def test_every_item_carries_the_kbuild_marker(pytester, fakelinux):
    # Without -m keyword matching (pytest < 8.3) the marker is there all the same.
    write_matrix(pytester, fakelinux, MATRIX)
    result = pytester.runpytest("--kbuild-matrix=m.yaml", "--collect-only", "-q", "-m", "kbuild")
    assert len(collected(result)) == 18
