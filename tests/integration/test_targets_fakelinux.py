"""The targets beyond the image (kselftest, perf, cpupower, packages,
dtbs_check, htmldocs, make:<goal>) on fakelinux: their artifacts, and their
failure paths through FAIL=<target>."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET

import pytest

from pytest_kbuild import Build, Status
from pytest_kbuild.errors import KbuildUserError
from tests.support import builds_by_id, path_without


def build(tree, tmp_path, *targets, arch="x86_64", toolchain="gcc", **fields):
    return Build(
        tree,
        target_arch=arch,
        toolchain=toolchain,
        kconfig="tinyconfig",
        targets=list(targets),
        output_dir=tmp_path / "out",
        **fields,
    ).run()


def names(tar):
    with tarfile.open(tar) as t:
        return sorted(m.name for m in t.getmembers())


def test_kselftest_installs_every_dir(fakelinux, tmp_path):
    result = build(fakelinux, tmp_path, "kselftest")
    assert result["kselftest"].status is Status.PASS
    members = names(tmp_path / "out" / "kselftest.tar.xz")
    assert {"./run_kselftest.sh", "./size/size.o", "./timers/timers.o"} <= set(members)


def test_kselftest_dir_that_does_not_build_is_a_warning(fakelinux, tmp_path, monkeypatch):
    monkeypatch.setenv("FAIL", "kselftest")
    result = build(fakelinux, tmp_path, "kselftest", "kernel")
    k = result["kselftest"]
    assert k.status is Status.WARNING, k.reason
    assert k.reason == "kselftest installed with problems (test dirs that did not build: size)"
    assert "fakelinux_selftest_failure" in k.errors[0]
    assert k.passed and k.built
    # Passed with problems: the artifact is there, and the build passes.
    assert [a.name for a in k.artifacts] == ["kselftest.tar.xz"]
    assert "./size/size.o" not in names(tmp_path / "out" / "kselftest.tar.xz")
    assert result["kernel"].status is Status.PASS
    assert result.status is Status.WARNING and result.passed
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["status"] == "WARNING"


def test_kselftest_that_installs_nothing_fails(fakelinux, tmp_path, monkeypatch):
    monkeypatch.setenv("FAIL", "kselftest")
    result = build(fakelinux, tmp_path, "kselftest", make_variables={"TARGETS": "size"})
    k = result["kselftest"]
    assert k.status is Status.FAIL
    assert k.reason == "make kselftest-install exited 2: nothing was installed"
    # A failed target keeps what it made, but not what its failed command
    # (tar of the missing install dir) was writing.
    assert k.artifacts == []
    assert not (tmp_path / "out" / "kselftest.tar.xz").exists()


def test_kselftest_with_clang_gets_llvm_without_cc(fakelinux, tmp_path):
    # The selftests pick clang from LLVM=-N themselves; CC=clang-N would
    # make their Makefiles treat it as gcc (CROSS_COMPILE prefixes and all).
    result = build(fakelinux, tmp_path, "kselftest", "kernel", toolchain="clang-16")
    assert result.passed, result["kselftest"].reason
    log = (tmp_path / "out" / "build.log").read_text()
    ksft = next(ln for ln in log.splitlines() if ln.startswith("$ make") and "kselftest" in ln)
    kernel = next(ln for ln in log.splitlines() if ln.startswith("$ make") and "bzImage" in ln)
    assert " LLVM=-16" in ksft and " CC=" not in ksft and " HOSTCC=" not in ksft
    assert " CC=clang-16" in kernel  # the other targets keep the toolchain's CC


@pytest.mark.parametrize(
    ("target", "artifact", "member"),
    [
        ("perf", "perf.tar.xz", "./usr/bin/perf"),
        ("cpupower", "cpupower.tar.xz", "./usr/bin/cpupower"),
        ("htmldocs", "htmldocs.tar.xz", "./index.html"),
    ],
)
def test_tools_and_docs_pass_then_fail(fakelinux, tmp_path, monkeypatch, target, artifact, member):
    ok = build(fakelinux, tmp_path / "ok", target)
    assert ok[target].status is Status.PASS, ok[target].reason
    assert member in names(tmp_path / "ok" / "out" / artifact)
    monkeypatch.setenv("FAIL", target)
    bad = build(fakelinux, tmp_path / "bad", target)
    assert bad[target].status is Status.FAIL
    assert "fakelinux_injected_failure" in bad[target].errors[0]
    assert not (tmp_path / "bad" / "out" / artifact).exists()


def test_htmldocs_honours_sphinxdirs(fakelinux, tmp_path):
    result = build(fakelinux, tmp_path, "htmldocs", make_variables={"SPHINXDIRS": "core-api"})
    assert result.passed
    assert "./core-api/index.html" in names(tmp_path / "out" / "htmldocs.tar.xz")


def test_bindeb_pkg_keeps_the_debs_not_changes_nor_buildinfo(fakelinux, tmp_path):
    # A build dir of the user's: the packages land beside it, as Kbuild puts them.
    bdir = tmp_path / "b" / "build"
    (tmp_path / "b").mkdir()
    old = tmp_path / "b" / "old_1.0_x86.deb"  # an earlier run's: not this build's
    old.write_text("old")
    os.utime(old, (1, 1))
    result = build(fakelinux, tmp_path, "bindeb-pkg", build_dir=bdir)
    assert result["bindeb-pkg"].status is Status.PASS, result["bindeb-pkg"].reason
    kept = sorted(a.name for a in result["bindeb-pkg"].artifacts)
    assert kept == ["linux-image-6.1.0_6.1.0-1_x86.deb", "linux-libc-dev_6.1.0-1_x86.deb"]
    assert sorted(p.name for p in (tmp_path / "out").glob("*.deb")) == kept
    assert not list((tmp_path / "out").glob("*.changes"))
    assert not list((tmp_path / "out").glob("*.buildinfo"))


def test_bindeb_pkg_in_a_temporary_build_dir_leaves_nothing_behind(
    fakelinux, tmp_path, monkeypatch
):
    # A temp dir of this test's own: other tests running beside it (xdist)
    # make and remove kbuild-* dirs in the shared one.
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    result = build(fakelinux, tmp_path, "bindeb-pkg")
    assert result.passed
    assert len(result["bindeb-pkg"].artifacts) == 2
    assert os.listdir(private) == []


@pytest.mark.parametrize(
    ("target", "pattern"),
    [("targz-pkg", "linux-6.1.0-x86_64.tar.gz"), ("tarxz-pkg", "linux-6.1.0-x86_64.tar.xz")],
)
def test_tarball_packages(fakelinux, tmp_path, monkeypatch, target, pattern):
    result = build(fakelinux, tmp_path, target)
    assert [a.name for a in result[target].artifacts] == [pattern]
    assert "boot/vmlinuz-6.1.0" in names(tmp_path / "out" / pattern)
    monkeypatch.setenv("FAIL", target)
    assert build(fakelinux, tmp_path / "f", target)[target].status is Status.FAIL


def test_binrpm_pkg_skips_without_rpmbuild(fakelinux, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(path_without(tmp_path, "rpmbuild")))
    result = build(fakelinux, tmp_path, "binrpm-pkg", "kernel")
    r = result["binrpm-pkg"]
    assert r.status is Status.SKIP
    assert r.reason == (
        "binrpm-pkg needs rpmbuild (Debian: rpm), which runtime local does not have"
    )
    assert result.passed  # the kernel still built


def test_binrpm_pkg_with_rpmbuild(fakelinux, tmp_path):
    if shutil.which("rpmbuild") is None:
        pytest.skip("no rpmbuild on this machine (Debian: rpm)")
    result = build(fakelinux, tmp_path, "binrpm-pkg")
    assert [a.name for a in result["binrpm-pkg"].artifacts] == ["kernel-6.1.0-1.x86.rpm"]


def test_dtbs_check_on_a_dtbs_arch(fakelinux, tmp_path, monkeypatch):
    kw = {"kconfig_add": ["CONFIG_OF=y"]}
    assert build(fakelinux, tmp_path / "a", "dtbs_check", arch="arm64", **kw).passed
    monkeypatch.setenv("FAIL", "dtbs_check")
    bad = build(fakelinux, tmp_path / "b", "dtbs_check", arch="arm64", **kw)
    assert bad["dtbs_check"].status is Status.FAIL


def test_dtbs_check_findings_are_dt_schema_warnings(fakelinux, tmp_path, monkeypatch):
    monkeypatch.setenv("WARN", "dtbs_check")
    kw = {"kconfig_add": ["CONFIG_OF=y"]}
    result = build(fakelinux, tmp_path, "dtbs_check", arch="arm64", **kw)
    check = result["dtbs_check"]
    assert check.status is Status.PASS, check.reason
    found = [d for d in check.diagnostics if d["tool"] == "dt-schema"]
    assert found and {d["kind"] for d in found} == {"warning"}
    assert {d["message"] for d in found} == {"/: 'model' is a required property"}
    assert all(d["file"].startswith("arch/arm64/boot/dts/") for d in found), found
    assert all(d["raw"][1].startswith("\tFrom schema: ") for d in found)
    assert check.warnings == len(check.diagnostics)  # the injected compiler warning too


@pytest.mark.parametrize("goal", ["init/", "init/main.o", "W=1 kernel/", "modules_prepare"])
def test_make_goal_targets(fakelinux, tmp_path, goal):
    result = build(fakelinux, tmp_path, f"make:{goal}")
    r = result[f"make:{goal}"]
    if goal == "modules_prepare":  # fakelinux has no such goal: make says so
        assert r.status is Status.FAIL
        assert "No rule to make target 'modules_prepare'" in r.errors[0]
        return
    assert r.status is Status.PASS, r.reason
    assert list(result.targets) == ["config", f"make:{goal}"]
    log = (tmp_path / "out" / "build.log").read_text()
    assert f" {goal}\n" in log


def test_make_goal_fails_with_the_compiler_error(fakelinux, tmp_path, monkeypatch):
    monkeypatch.setenv("FAIL", "goal")
    r = build(fakelinux, tmp_path, "make:init/")["make:init/"]
    assert r.status is Status.FAIL
    assert "fakelinux_injected_failure" in r.errors[0]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("make:", "target 'make:': no goal; expected make:<goal>"),
        ("make:-C /tmp", "target 'make:-C /tmp': '-C' is a make option or a variable set by"),
        ("make:O=/x vmlinux", "target 'make:O=/x vmlinux': 'O=/x' is a make option or a"),
    ],
)
def test_bad_make_goals_are_user_errors(fakelinux, tmp_path, name, message):
    with pytest.raises(KbuildUserError) as exc:
        build(fakelinux, tmp_path, name)
    assert message in str(exc.value)


def test_kbuild_warning_exits_0_and_make_goals_reproduce(fakelinux, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pytest_kbuild.cli import kbuild_main; raise SystemExit(kbuild_main())",
            f"--directory={fakelinux}",
            *("-a", "x86_64", "-k", "tinyconfig", "-o", str(tmp_path / "out")),
            *("kselftest", "make:W=1 kernel/", "make:init/main.o"),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "FAIL": "kselftest"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith(" kselftest 'make:W=1 kernel/' make:init/main.o")
    assert [ln.split(" in ")[0] for ln in lines[1:] if ln.startswith("I: ")][:4] == [
        "I: config: PASS",
        "I: kselftest: WARNING",
        "I: make:W=1 kernel/: PASS",
        "I: make:init/main.o: PASS",
    ]
    assert any(ln.startswith("W:   ") and "fakelinux_selftest_failure" in ln for ln in lines)
    assert not any(ln.startswith("E:") for ln in lines)


MATRIX = """tree: {tree}
arch: [x86_64]
toolchain: [gcc]
kconfig: [tinyconfig]
targets: [kselftest, "make:init/main.o", "make:W=1 kernel/"]
"""


def test_plugin_items_warning_and_make_goals(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("FAIL", "kselftest")
    (pytester.path / "m.yaml").write_text(MATRIX.format(tree=fakelinux))
    collected = pytester.runpytest("--kbuild-matrix=m.yaml", "--collect-only", "-q")
    ids = [ln for ln in collected.outlines if "::" in ln]
    assert ids == [
        f"m.yaml::x86_64-gcc-tinyconfig::{t}"
        for t in ("kselftest", "make-W-1-kernel", "make-init-main-o")
    ]
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--junitxml=j.xml", "-o", "junit_family=xunit1"
    )
    # WARNING: the item passes; pytest's warnings summary says why.
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*TargetWarning: x86_64-gcc-tinyconfig::kselftest WARNING: kselftest installed "
            "with problems (test dirs that did not build: size)",
            "*warn kselftest*",  # the grid
        ]
    )
    summary = json.loads((pytester.path / "kbuild-results" / "results.json").read_text())
    targets = builds_by_id(summary)["x86_64-gcc-tinyconfig"]["targets"]
    assert {n: (t["outcome"], t["status"]) for n, t in targets.items()} == {
        "kselftest": ("passed", "WARNING"),
        "make:init/main.o": ("passed", "PASS"),
        "make:W=1 kernel/": ("passed", "PASS"),
    }
    cases = {c.get("name"): c for c in ET.parse(pytester.path / "j.xml").iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["kselftest"].iter("property")}
    assert props["status"] == "WARNING"
    assert "fakelinux_selftest_failure" in props["first_error"]
    assert cases["kselftest"].find("failure") is None
    assert set(cases) == {"kselftest", "make-init-main-o", "make-W-1-kernel"}
