"""The boot target on Debian's real linux-source-6.1 tree under real QEMU:
matrices/boot.yaml's tinyconfig kernels are built and booted.

CI boots x86_64, arm64 and riscv (the riscv one through OpenSBI and a
gunzipped Image); each boot config build costs a few CPU-minutes (arm64's
test alone: 273 s), so the other arches boot outside CI:
PYTEST_KBUILD_BOOT_ARCHES=i386,arm,mips,s390,powerpc (.ci/setup with that
variable set installs their packages).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil

import pytest

from pytest_kbuild.boot.console import MARKER
from pytest_kbuild.boot.qemu import run_qemu
from tests.support import CI_BOOT_ARCHES, ROOT, require_tools, run_pytest

BOOT = ROOT / "matrices" / "boot.yaml"
ARCHES = os.environ.get("PYTEST_KBUILD_BOOT_ARCHES", ",".join(CI_BOOT_ARCHES)).split(",")
TOOLS = {
    "x86_64": ["gcc", "qemu-system-x86_64"],
    "arm64": ["aarch64-linux-gnu-gcc", "qemu-system-aarch64"],
    "riscv": ["riscv64-linux-gnu-gcc", "qemu-system-riscv64"],
    "i386": ["gcc", "qemu-system-i386"],
    "arm": ["arm-linux-gnueabihf-gcc", "qemu-system-arm"],
    "mips": ["mips-linux-gnu-gcc", "qemu-system-mips"],
    "s390": ["s390x-linux-gnu-gcc", "qemu-system-s390x"],
    "powerpc": ["powerpc64le-linux-gnu-gcc", "powerpc-linux-gnu-gcc", "qemu-system-ppc"],
}


@pytest.fixture(scope="module")
def booted(linux_tree, tmp_path_factory):
    require_tools("make", *(t for a in ARCHES for t in TOOLS[a]))
    work = tmp_path_factory.mktemp("boot")
    proc = run_pytest(
        work,
        f"--kbuild-matrix={BOOT}",
        f"--kbuild-tree={linux_tree}",
        "--kbuild-results=results",
        "--kbuild-retries=1",
        # Two workers on the shared jobserver: one arch's boot (QEMU, one
        # slot) runs while the next arch builds on the other slot.
        "-n",
        "2",
        "-k",
        # The build id, so that arm does not select arm64 too.
        " or ".join(f"{arch}-gcc-tinyconfig" for arch in ARCHES),
        "-rA",
    )
    print(proc.stdout[-8000:])
    return work / "results", proc


@pytest.mark.parametrize("arch", ARCHES)
def test_the_built_kernel_boots_and_runs_init(booted, arch):
    results, proc = booted
    build = results / "boot" / f"{arch}-gcc-tinyconfig"
    meta = json.loads((build / "metadata.json").read_text())
    boot = meta["targets"]["boot"]
    assert boot["status"] == "PASS", (boot["reason"], boot["errors"], proc.stdout[-3000:])
    facts = boot["boot"]
    release = facts["release"]
    assert re.fullmatch(r"6\.1\.\d+.*", release)
    console = (build / "boot.log").read_text(errors="replace")
    assert MARKER in console and f"Linux version {release} " in console
    assert f"pytest-kbuild-boot: release {release}" in console
    assert facts["qemu"].startswith("QEMU emulator version 7.")
    assert facts["command"].startswith(shutil.which(TOOLS[arch][-1]) or TOOLS[arch][-1])
    assert str(build / "initramfs.cpio") in facts["command"]
    assert {"boot.log", "initramfs.cpio"} <= set(meta["artifacts"])
    print(f"{arch}: {facts['seconds']} s, tries {1 + len(boot['attempts'])}: {facts['excerpt']}")


def test_the_recorded_command_boots_the_same_artifacts_again(booted):
    results, _ = booted
    build = results / "boot" / f"{ARCHES[0]}-gcc-tinyconfig"
    facts = json.loads((build / "metadata.json").read_text())["targets"]["boot"]["boot"]
    # run_qemu stops QEMU a few seconds after init's last line, for a
    # machine without a reboot driver (mips's Malta) as well.
    run = run_qemu(shlex.split(facts["command"]), [], 300, facts["release"])
    assert not run.timed_out
    assert MARKER in run.text and f"Linux version {facts['release']} " in run.text
