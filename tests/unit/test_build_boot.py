"""The boot target inside a Build: a FakeRuntime for Kbuild and the
compiler, a FakeQemu on PATH for the boot; retries keep every console."""

from __future__ import annotations

import json

import pytest

from pytest_kbuild.boot import initramfs
from pytest_kbuild.boot.console import DONE, MARKER
from pytest_kbuild.build.build import Build
from pytest_kbuild.results import METADATA, Status
from tests.unit.fakeqemu import Console, FakeQemu

RELEASE = "6.8.0-rc3"
BOOTED = f"Linux version {RELEASE} (gcc)\n{MARKER}\n{DONE}\n"
HUNG = f"Linux version {RELEASE} (gcc)\nRun /init as init process\n"


@pytest.fixture
def boot_build(kernel_tree, fake_runtime, tmp_path, monkeypatch):
    """boot_build(*consoles, retries=0, arch=, qemu=) -> (Build, FakeQemu) of
    an x86_64 (or *arch*, booted by *qemu*) tinyconfig with targets config,
    kernel, boot."""
    (kernel_tree / initramfs.NOLIBC).mkdir(parents=True)
    (kernel_tree / initramfs.NOLIBC / "nolibc.h").write_text("/* nolibc */\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")

    def effects(call):
        argv = call.argv
        if "-o" in argv:  # the init's compiler
            with open(argv[argv.index("-o") + 1], "wb") as f:
                f.write(b"\x7fELF")
        if call.goal == "bzImage":
            release = tmp_path / "build" / "include" / "config" / "kernel.release"
            release.parent.mkdir(parents=True, exist_ok=True)
            release.write_text(RELEASE + "\n")

    fake_runtime.on_run = effects

    def make(*consoles, retries=0, arch="x86_64", qemu="qemu-system-x86_64"):
        fake = FakeQemu(bin_dir, qemu, list(consoles)).install()
        build = Build(
            kernel_tree,
            target_arch=arch,
            kconfig="tinyconfig",
            targets=["config", "kernel", "boot"],
            runtime=fake_runtime,
            jobs=1,
            retries=retries,
            timeout=2,
            output_dir=tmp_path / "out",
            build_dir=tmp_path / "build",
            cache_dir=tmp_path / "cache",
        )
        return build, fake

    return make


def test_a_boot_that_passes_keeps_console_initramfs_and_facts(boot_build, fake_runtime):
    build, qemu = boot_build(Console(BOOTED))
    result = build.run()
    assert result["boot"].status is Status.PASS, result["boot"].reason
    assert fake_runtime.goals[-2:] == ["headers", "gcc"]
    meta = json.loads((build.output_dir / METADATA).read_text())
    facts = meta["targets"]["boot"]["boot"]
    assert facts["release"] == RELEASE and facts["consoles"] == ["boot.log"]
    assert facts["command"].endswith(
        f"-initrd {build.output_dir}/initramfs.cpio -append 'console=ttyS0 panic=-1'"
    )
    assert {"boot.log", "initramfs.cpio", "bzImage"} <= set(meta["artifacts"])
    assert meta["artifacts"]["boot.log"]["target"] == "boot"
    assert len(qemu.runs) == 1


def test_a_hang_is_retried_and_each_tries_console_kept(boot_build, fake_runtime):
    build, qemu = boot_build(Console(HUNG, then="hang"), Console(BOOTED), retries=2)
    result = build.run()
    boot = result["boot"]
    assert boot.status is Status.PASS and len(qemu.runs) == 2
    assert [a["status"] for a in boot.attempts] == ["FAIL"]
    assert boot.attempts[0]["reason"].startswith("hang: the kernel ran /init but init printed")
    assert boot.boot["consoles"] == ["boot-try1.log", "boot.log"]
    assert (build.output_dir / "boot-try1.log").read_text() == HUNG
    # the init was compiled once, for the first try
    assert fake_runtime.goals.count("gcc") == 1


def test_retries_run_out_and_the_hang_fails_with_the_console_tail(boot_build):
    build, qemu = boot_build(Console(HUNG, then="hang"), retries=1)
    boot = build.run()["boot"]
    assert boot.status is Status.FAIL and len(qemu.runs) == 2
    assert "Run /init as init process" in boot.errors
    assert boot.boot["consoles"] == ["boot-try1.log", "boot.log"]


def test_a_panic_is_not_retried(boot_build):
    panic = f"Linux version {RELEASE} (gcc)\nKernel panic - not syncing: No working init found.\n"
    build, qemu = boot_build(Console(panic), retries=2)
    boot = build.run()["boot"]
    assert boot.status is Status.FAIL and len(qemu.runs) == 1 and boot.attempts == []


def test_missing_qemu_is_an_error_not_a_failure(boot_build, tmp_path, monkeypatch):
    build, _ = boot_build(Console(BOOTED))
    (tmp_path / "bin" / "qemu-system-x86_64").unlink()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    boot = build.run()["boot"]
    assert boot.status is Status.ERROR
    assert "'qemu-system-x86_64' not found on PATH; install Debian's qemu-system-x86" in boot.reason


def test_an_arch_without_a_machine_skips_its_boot(kernel_tree, fake_runtime, tmp_path):
    fake_runtime.produces["zImage"] = ["arch/sparc/boot/zImage"]
    build = Build(
        kernel_tree,
        target_arch="sparc",
        kconfig="tinyconfig",
        targets=["boot"],
        runtime=fake_runtime,
        jobs=1,
        output_dir=tmp_path / "out",
        build_dir=tmp_path / "build",
    )
    boot = build.run_target("boot")
    assert boot.status is Status.SKIP
    assert boot.reason == "boot: no QEMU machine for arch sparc (data/boot/)"


def test_an_arch_without_nolibc_links_init_against_the_cross_libc(
    boot_build, fake_runtime, tmp_path
):
    fake_runtime.produces["bzImage"] = ["arch/s390/boot/bzImage"]
    libc_gcc = tmp_path / "bin" / "s390x-linux-gnu-gcc"
    libc_gcc.write_text("#!/bin/sh\n")
    libc_gcc.chmod(0o755)
    build, qemu = boot_build(Console(BOOTED), arch="s390", qemu="qemu-system-s390x")
    boot = build.run()["boot"]
    assert boot.status is Status.PASS, boot.reason
    assert "headers" not in fake_runtime.goals  # glibc brings its own kernel headers
    cc = fake_runtime.calls[-1].argv
    assert cc[0] == "s390x-linux-gnu-gcc" and "-DKBUILD_BOOT_LIBC" in cc
    assert "-nostdlib" not in cc and "-include" not in cc
    assert boot.boot["command"].split()[1:3] == ["-M", "s390-ccw-virtio"]
    assert "console=ttysclp0" in boot.boot["command"]
