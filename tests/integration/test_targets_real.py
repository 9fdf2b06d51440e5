"""The targets beyond the image on Debian's real linux-source-6.1 tree:
kselftest (the `size` test dir only), cpupower and a make:<goal>, in one
x86_64 gcc tinyconfig build; kselftest again with clang-16 (LLVM=-16);
dtbs_check of arm64's Toshiba boards in the curated arm64 clang-16 image.
perf, the packages, htmldocs and dtbs_check against every schema cost
minutes each: README's "Targets" section gives their figures, measured
outside CI."""

from __future__ import annotations

import subprocess
import tarfile

from pytest_kbuild import Build, Status
from pytest_kbuild.diagnostics import Tool
from tests.support import ARM64_CLANG_16, require_engine, require_tools


def members(path):
    with tarfile.open(path) as t:
        return {m.name for m in t.getmembers()}


def test_kselftest_cpupower_and_a_make_goal(linux_tree, tmp_path):
    require_tools("gcc", "rsync", "msgfmt", "pkg-config")
    out = tmp_path / "out"
    result = Build(
        linux_tree,
        target_arch="x86_64",
        toolchain="gcc",
        kconfig="tinyconfig",
        targets=["kselftest", "cpupower", "make:kernel/fork.o"],
        make_variables={"TARGETS": "size"},  # kselftest's own subset selector
        output_dir=out,
        jobs=2,
    ).run()
    statuses = {n: (r.status, r.reason) for n, r in result.targets.items()}
    assert statuses == {
        "config": (Status.PASS, ""),
        "kselftest": (Status.PASS, ""),
        "cpupower": (Status.PASS, ""),
        "make:kernel/fork.o": (Status.PASS, ""),
    }
    assert {"./run_kselftest.sh", "./size/get_size"} <= members(out / "kselftest.tar.xz")
    assert "./usr/bin/cpupower" in members(out / "cpupower.tar.xz")
    log = (out / "build.log").read_text()
    assert "kernel/fork.o\n" in log


def test_kselftest_with_clang_gets_llvm_and_no_cc(linux_tree, tmp_path):
    """The selftests pick clang themselves from LLVM=-16: kbuild passes it
    and leaves CC/HOSTCC out (with CC=clang-16 their Makefiles break)."""
    require_tools("clang-16", "ld.lld-16", "rsync", "readelf")
    out = tmp_path / "out"
    result = Build(
        linux_tree,
        target_arch="x86_64",
        toolchain="clang-16",
        kconfig="tinyconfig",
        targets=["kselftest"],
        make_variables={"TARGETS": "size"},
        output_dir=out,
        jobs=2,
    ).run()
    statuses = {n: (r.status, r.reason) for n, r in result.targets.items()}
    assert statuses == {"config": (Status.PASS, ""), "kselftest": (Status.PASS, "")}
    with tarfile.open(out / "kselftest.tar.xz") as t:
        assert {"./run_kselftest.sh", "./size/get_size"} <= set(t.getnames())
        binary = t.extractfile("./size/get_size")
        assert binary is not None
        (tmp_path / "get_size").write_bytes(binary.read())
    comment = subprocess.run(
        ["readelf", "-p", ".comment", str(tmp_path / "get_size")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "clang version 16" in comment, comment
    assert "GCC:" not in comment, comment
    log = (out / "build.log").read_text()
    install = [
        line
        for line in log.splitlines()
        if line.startswith("$ make ") and "kselftest-install" in line
    ]
    assert install, log[:2000]
    words = install[0].split()
    assert "LLVM=-16" in words, install[0]
    assert not [w for w in words if w.startswith(("CC=", "HOSTCC="))], install[0]


def test_dtbs_check_in_the_curated_image_counts_dt_schema_warnings(linux_tree, tmp_path):
    """dtbs_check where dt-validate comes from the image's PyPI dtschema: the
    two Toshiba Visconti boards (tinyconfig + ARCH_VISCONTI) against the
    Toshiba bindings only (DT_SCHEMA_FILES, Kbuild's own selector: the
    whole schema set costs minutes); what dt-validate finds are warnings."""
    require_engine("podman", ARM64_CLANG_16)
    out = tmp_path / "out"
    result = Build(
        linux_tree,
        target_arch="arm64",
        toolchain="clang-16",
        kconfig="tinyconfig",
        kconfig_add=["CONFIG_ARCH_VISCONTI=y"],
        targets=["dtbs_check"],
        make_variables={"DT_SCHEMA_FILES": "toshiba"},
        runtime="podman",
        image=ARM64_CLANG_16,
        output_dir=out,
        jobs=2,
    ).run()
    statuses = {n: (r.status, r.reason) for n, r in result.targets.items()}
    assert statuses == {"config": (Status.PASS, ""), "dtbs_check": (Status.PASS, "")}
    check = result.targets["dtbs_check"]
    found = [d for d in check.diagnostics if d["tool"] == Tool.DT_SCHEMA.value]
    assert found == check.diagnostics, [d["raw"][0] for d in check.diagnostics]
    assert {d["kind"] for d in found} == {"warning"}
    assert check.warnings == len(found) >= 4
    boards = {d["file"] for d in found}
    assert boards == {
        "arch/arm64/boot/dts/toshiba/tmpv7708-rm-mbrc.dtb",
        "arch/arm64/boot/dts/toshiba/tmpv7708-visrobo-vrb.dtb",
    }
    pinctrl = [d for d in found if d["message"].startswith("pmux@24190000: $nodename:0: ")]
    assert len(pinctrl) == 2
    assert all("toshiba,visconti-pinctrl.yaml" in d["raw"][1] for d in pinctrl)
