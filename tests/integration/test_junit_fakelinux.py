"""What CI systems read from a run: the kbuild marker for -m, and the JUnit
XML that GitLab and Jenkins show (classnames, <system-out>)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.support import XUNIT2_XSD

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


def cases_of(path):
    return {
        (c.get("classname"), c.get("name")): c for c in ET.parse(path).getroot().iter("testcase")
    }


DOTTED = """
arch: [x86_64]
toolchain: [gcc]
kconfig: [defconfig]
targets: [config, kernel]
include:
  - {arch: arm64, toolchain: gcc, kconfig: defconfig, name: v1.2, targets: [config]}
"""


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_system_out_has_diagnostics_and_attachments(
    pytester, fakelinux, monkeypatch, xdist, family
):
    monkeypatch.setenv("WARN", "kernel")
    write_matrix(pytester, fakelinux, DOTTED)
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--junitxml=j.xml", "-o", f"junit_family={family}", *xdist
    )
    result.assert_outcomes(passed=3)
    cases = cases_of(pytester.path / "j.xml")
    assert set(cases) == {
        ("m.x86_64-gcc-defconfig", "config"),
        ("m.x86_64-gcc-defconfig", "kernel"),
        ("m.arm64-gcc-defconfig-v1_2", "config"),
    }
    attach = [
        f"[[ATTACHMENT|kbuild-results/m/x86_64-gcc-defconfig/{f}]]"
        for f in ("build.log", "config", "metadata.json")
    ]
    kernel = cases["m.x86_64-gcc-defconfig", "kernel"]
    (out,) = kernel.findall("system-out")
    lines = out.text.splitlines()
    assert "warning: unused variable" in lines[1] and lines[-3:] == attach
    (config,) = cases["m.x86_64-gcc-defconfig", "config"].findall("system-out")
    assert config.text.splitlines() == attach
    # Every attached path resolves from the rootdir, as GitLab and Jenkins do.
    for line in lines[-3:]:
        assert (pytester.path / line[len("[[ATTACHMENT|") : -2]).is_file()


def test_failed_target_system_out_follows_the_failure(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("FAIL", "kernel")
    write_matrix(
        pytester, fakelinux, "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n"
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--junitxml=j.xml")
    result.assert_outcomes(passed=1, failed=1)
    kernel = cases_of(pytester.path / "j.xml")["m.x86_64-gcc-defconfig", "kernel"]
    assert [c.tag for c in kernel][-2:] == ["failure", "system-out"]
    text = kernel.find("system-out").text
    assert "error:" in text.splitlines()[0]
    assert "[[ATTACHMENT|kbuild-results/m/x86_64-gcc-defconfig/build.log]]" in text


def test_matrix_outside_the_rootdir_and_attach_root(pytester, fakelinux):
    project = pytester.path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    write_matrix(pytester, fakelinux, "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config]\n")
    pytester.chdir()
    result = pytester.runpytest_subprocess(
        "--rootdir=project",
        "-c",
        "project/pytest.ini",
        "--kbuild-matrix=m.yaml",
        "m.yaml",
        "--junitxml=j.xml",
        f"--kbuild-attach-root={pytester.path}",
    )
    result.assert_outcomes(passed=1)
    ((name, case),) = cases_of(pytester.path / "j.xml").items()
    assert name == ("m.x86_64-gcc-defconfig", "config")
    assert (
        "[[ATTACHMENT|kbuild-results/m/x86_64-gcc-defconfig/build.log]]"
        in case.find("system-out").text
    )


MIXED = """
arch: [riscv]
toolchain: [gcc, clang-16]
targets: [config]
exclude:
  - {arch: riscv, toolchain: clang-16, reason: "a skip for the schema"}
include:
  - {arch: x86_64, toolchain: gcc, env: {WARN: kernel}, targets: [config, kernel, dtbs]}
  - {arch: arm64, toolchain: gcc, env: {FAIL: kernel}, targets: [config, kernel]}
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_xunit2_validates_against_the_xunit_plugins_schema(pytester, fakelinux, xdist):
    """junit_family=xunit2 (pytest's default) gives what Jenkins' xUnit plugin
    accepts: pass, fail, skip and <system-out> in testcases, properties only
    on the testsuite. xunit1 keeps them in testcases, which the schema
    rejects: so the schema is strict enough to catch them."""
    import xmlschema

    schema = xmlschema.XMLSchema(XUNIT2_XSD)
    write_matrix(pytester, fakelinux, MIXED)
    strict = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--junitxml=x2.xml", "-o", "junit_family=xunit2", *xdist
    )
    outcomes = strict.parseoutcomes()
    assert outcomes.get("failed") and outcomes.get("skipped") and outcomes.get("passed"), outcomes
    schema.validate(pytester.path / "x2.xml")
    root = ET.parse(pytester.path / "x2.xml").getroot()
    assert not root.findall(".//testcase/properties")
    suite = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert suite["kbuild_matrices"].endswith("m.yaml") and suite["kbuild_version"]
    assert [c.tag for c in root.iter("testcase") if c.find("failure") is not None]
    # pytest's default family is xunit2: the same file
    default = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--junitxml=d.xml", *xdist)
    assert default.parseoutcomes() == outcomes
    schema.validate(pytester.path / "d.xml")
    xunit1 = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--junitxml=x1.xml", "-o", "junit_family=xunit1", *xdist
    )
    assert xunit1.parseoutcomes() == outcomes
    assert ET.parse(pytester.path / "x1.xml").getroot().findall(".//testcase/properties")
    assert not schema.is_valid(pytester.path / "x1.xml")
