"""A TuxSuite plan's job on Debian's real linux-source-6.1: config only, so
it costs seconds; the toolchain mapping reaches the real Kconfig."""

from __future__ import annotations

import json

from tests.support import require_tools, run_pytest

PLAN = """
version: 1
jobs:
- name: mainline
  builds:
    - {target_arch: x86_64, toolchain: korg-gcc-12, kconfig: [tinyconfig, CONFIG_PRINTK=y],
       targets: [config]}
    - {target_arch: x86_64, toolchain: korg-clang-16, kconfig: tinyconfig,
       make_variables: {LLVM: 1}, targets: [config]}
  test: {device: qemu-arm64, tests: [ltp-smoke]}
- name: other
  build: {target_arch: arm64, toolchain: gcc-12, kconfig: defconfig}
"""


def test_one_job_of_a_plan_configures_the_real_tree(linux_tree, tmp_path):
    require_tools("gcc-12", "clang-16", "ld.lld-16")
    (tmp_path / "plan.yaml").write_text(PLAN)
    proc = run_pytest(
        tmp_path,
        "--kbuild-matrix=plan.yaml",
        f"--kbuild-tree={linux_tree}",
        "--kbuild-plan-job=main*",
        "-rs",
        "-n",
        "2",
    )
    assert "2 passed, 2 skipped" in proc.stdout, proc.stdout[-3000:]
    assert "device qemu-arm64 boots arm64, not this x86_64 build" in proc.stdout
    out = tmp_path / "kbuild-results" / "plan"
    gcc = out / "x86_64-korg-gcc-12-tinyconfig-mainline"
    assert "CONFIG_PRINTK=y" in (gcc / "config").read_text()
    assert "CONFIG_CC_IS_GCC=y" in (gcc / "config").read_text()
    meta = json.loads((gcc / "metadata.json").read_text())
    assert meta["toolchain"]["name"] == "gcc-12"
    assert "Debian's gcc-12" in meta["matrix"]["plan"]["toolchain"]
    clang = (out / "x86_64-korg-clang-16-tinyconfig-mainline" / "config").read_text()
    # LLVM=1 of the plan with clang-16: Debian's versioned clang-16 and its tools
    assert "CONFIG_CC_IS_CLANG=y" in clang and "CONFIG_CLANG_VERSION=160" in clang
    assert "CONFIG_LD_IS_LLD=y" in clang
    assert not (out / "arm64-gcc-12-defconfig-other").exists()  # job not selected
