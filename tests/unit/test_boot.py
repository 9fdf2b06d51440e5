"""The boot target's QEMU side: machines from data/boot/, the command, the
host checks, and runs of a fake qemu-system-* that prints canned consoles."""

from __future__ import annotations

import dataclasses
import gzip
import json
from contextlib import contextmanager

import pytest

from pytest_kbuild import definitions
from pytest_kbuild.boot import qemu as boot
from pytest_kbuild.boot.console import DONE, MARKER
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.errors import DefinitionError, KbuildInfraError, ToolNotFound
from pytest_kbuild.results import Status
from tests.unit.fakeqemu import Console, FakeQemu

RELEASE = "6.1.0-test"
BOOTED = f"Linux version {RELEASE} (gcc)\r\n{MARKER}\r\npytest-kbuild-boot: release {RELEASE}\r\n"


@pytest.mark.parametrize("arch", definitions.available("boot"))
def test_every_machine_loads_with_its_fragments(arch):
    m = boot.Machine.load(arch)
    assert m is not None and Arch.load(arch).name == arch
    assert m.qemu.startswith("qemu-system-") and m.package.startswith("qemu-system-")
    assert m.fragments and all(f.is_file() for f in m.fragments)
    assert m.fragments[0].name == "common.config"


def test_an_arch_without_a_machine_cannot_boot():
    assert boot.Machine.load("sparc") is None


def test_the_command_boots_the_kernel_and_initramfs_on_the_serial_console(tmp_path):
    m = boot.Machine.load("riscv")
    argv = m.command("/usr/bin/qemu-system-riscv64", tmp_path / "Image", tmp_path / "i.cpio")
    assert argv[:3] == ["/usr/bin/qemu-system-riscv64", "-M", "virt"]
    assert argv[argv.index("-bios") + 1] == m.firmware
    assert argv[argv.index("-accel") + 1] == "tcg" and "-no-reboot" in argv
    assert argv[argv.index("-kernel") + 1] == str(tmp_path / "Image")
    assert argv[argv.index("-initrd") + 1] == str(tmp_path / "i.cpio")
    assert argv[-1] == "console=ttyS0 panic=-1"


def test_always_tcg():
    argv = boot.Machine.load("x86_64").command("q", boot.Path("k"), boot.Path("i"))
    assert argv[argv.index("-accel") + 1] == "tcg" and argv.count("-accel") == 1


def test_missing_qemu_is_an_infra_error_naming_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolNotFound, match="install Debian's qemu-system-arm"):
        boot.check_host(boot.Machine.load("arm64"))


def test_missing_firmware_is_an_infra_error_naming_the_package(tmp_path, monkeypatch):
    FakeQemu(tmp_path, "qemu-system-riscv64", [Console("")]).install()
    monkeypatch.setenv("PATH", str(tmp_path))
    m = dataclasses.replace(boot.Machine.load("riscv"), firmware=str(tmp_path / "fw.bin"))
    with pytest.raises(
        KbuildInfraError, match=r"firmware '.*fw.bin' is missing; install Debian's opensbi"
    ):
        boot.check_host(m)


MACHINE = {"qemu": "q", "package": "qemu-p", "machine": "m", "console": "c", "fragments": []}


def test_a_machine_may_build_init_against_a_cross_libc(data_dir):
    libc = {"compiler": "cc-libc", "packages": ["gcc-x", "libc-x"]}
    (data_dir / "boot" / "x86_64.yaml").write_text(json.dumps(MACHINE | {"libc_init": libc}))
    m = boot.Machine.load("x86_64")
    assert m.libc_compiler == "cc-libc" and m.libc_packages == ("gcc-x", "libc-x")
    assert m.packages == ["qemu-p", "gcc-x", "libc-x"]


def test_without_libc_init_the_init_uses_nolibc():
    m = boot.Machine.load("x86_64")
    assert m.libc_compiler == "" and m.libc_packages == () and m.packages == ["qemu-system-x86"]


@pytest.mark.parametrize(
    ("arch", "compiler", "packages"),
    [
        ("s390", "s390x-linux-gnu-gcc", ("gcc-s390x-linux-gnu", "libc6-dev-s390x-cross")),
        ("powerpc", "powerpc-linux-gnu-gcc", ("gcc-powerpc-linux-gnu", "libc6-dev-powerpc-cross")),
    ],
)
def test_6_1_nolibc_lacks_s390_and_powerpc_so_their_init_uses_glibc(arch, compiler, packages):
    m = boot.Machine.load(arch)
    assert m.libc_compiler == compiler and m.libc_packages == packages


def test_the_packages_of_a_machine_with_firmware():
    assert boot.Machine.load("riscv").packages == ["qemu-system-misc", "opensbi"]


@pytest.mark.parametrize(
    "libc", [True, "gcc", {"compiler": "gcc"}, {"compiler": "gcc", "packages": [1]}]
)
def test_a_bad_libc_init_names_the_file_and_the_accepted_form(data_dir, libc):
    (data_dir / "boot" / "x86_64.yaml").write_text(json.dumps(MACHINE | {"libc_init": libc}))
    with pytest.raises(DefinitionError, match=r"x86_64.yaml.*'libc_init' must be \{compiler"):
        boot.Machine.load("x86_64")


def test_a_missing_libc_compiler_is_an_infra_error_naming_its_packages(tmp_path, monkeypatch):
    FakeQemu(tmp_path, "qemu-system-x86_64", [Console("")]).install()
    monkeypatch.setenv("PATH", str(tmp_path))
    m = dataclasses.replace(
        boot.Machine.load("x86_64"), libc_compiler="cc-libc", libc_packages=("gcc-x", "libc-x")
    )
    with pytest.raises(
        ToolNotFound,
        match="the boot init for x86_64: 'cc-libc' not found on PATH; install "
        "Debian's gcc-x libc-x",
    ):
        boot.check_host(m)


def test_a_gzipped_image_is_unpacked_for_a_loader_that_needs_it(tmp_path):
    (tmp_path / "Image.gz").write_bytes(gzip.compress(b"kernel"))
    riscv, arm64 = boot.Machine.load("riscv"), boot.Machine.load("arm64")
    out = boot.boot_kernel(tmp_path / "Image.gz", riscv, tmp_path)
    assert out == tmp_path / "Image" and out.read_bytes() == b"kernel"
    assert boot.boot_kernel(tmp_path / "Image.gz", arm64, tmp_path) == tmp_path / "Image.gz"


@pytest.fixture
def qemu(tmp_path, monkeypatch):
    """qemu(*consoles) -> a FakeQemu for x86_64 first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")

    def make(*consoles):
        return FakeQemu(bin_dir, "qemu-system-x86_64", list(consoles)).install()

    return make


def setup(tmp_path, timeout=20.0, attempt=1):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "bzImage").write_bytes(b"kernel")
    (out / "initramfs.cpio").write_bytes(b"cpio")
    m = boot.Machine.load("x86_64")
    return boot.BootSetup(
        m, out / "bzImage", out / "initramfs.cpio", RELEASE, out, timeout, attempt
    )


def test_a_boot_that_reaches_init_passes_and_says_how(qemu, tmp_path):
    fake = qemu(Console(BOOTED + DONE + "\r\nreboot: Restarting system\r\n"))
    log = (tmp_path / "build.log").open("w+b")
    s = setup(tmp_path)
    out = boot.run(s, log)
    assert out.status is Status.PASS and out.reason == f"booted Linux {RELEASE}; init ran"
    assert out.facts["qemu"] == "QEMU emulator version 7.2.99 (fake)"
    assert out.facts["machine"] == "pc" and out.facts["accel"] == "tcg"
    assert out.facts["command"].split()[:3] == [str(fake.bin_dir / fake.name), "-M", "pc"]
    assert out.facts["excerpt"] == [f"Linux version {RELEASE} (gcc)", MARKER]
    assert len(fake.runs) == 1 and fake.runs[0][1:] == out.facts["command"].split()[1:-3] + [
        "-append",
        "console=ttyS0 panic=-1",
    ]
    assert (s.output_dir / "boot.log").read_text().startswith(f"Linux version {RELEASE}")
    log.seek(0)
    text = log.read().decode()
    assert text.startswith(f"$ {out.facts['command']}\n") and MARKER in text


def test_qemu_that_does_not_exit_after_init_is_stopped(qemu, tmp_path, monkeypatch):
    monkeypatch.setattr(boot, "AFTER_DONE", 0.2)
    qemu(Console(BOOTED + DONE + "\r\n", then="hang"))
    out = boot.run(setup(tmp_path), (tmp_path / "build.log").open("wb"))
    assert out.status is Status.PASS and out.facts["seconds"] < 10


def test_a_panic_fails_at_once_with_the_console_tail_and_the_command(qemu, tmp_path, monkeypatch):
    monkeypatch.setattr(boot, "AFTER_PANIC", 0.2)
    panic = (
        f"Linux version {RELEASE} (gcc)\nKernel panic - not syncing: VFS: Unable to mount root fs\n"
    )
    qemu(Console(panic, then="hang"))
    out = boot.run(setup(tmp_path), (tmp_path / "build.log").open("wb"))
    assert out.status is Status.FAIL and not out.retryable
    assert out.reason == "kernel panic: VFS: Unable to mount root fs"
    assert out.errors[1:3] == ["console tail (boot.log):", f"Linux version {RELEASE} (gcc)"]
    assert out.errors[-1] == f"boot again: {out.facts['command']}"
    assert out.facts["seconds"] < 10


def test_a_hang_is_stopped_at_the_timeout_and_may_be_retried(qemu, tmp_path):
    qemu(Console(f"Linux version {RELEASE} (gcc)\n", then="hang"))
    out = boot.run(setup(tmp_path, timeout=1.0), (tmp_path / "build.log").open("wb"))
    assert out.status is Status.FAIL and out.retryable
    assert out.reason.startswith("hang: init never ran within 1")


def test_qemu_exiting_early_fails_with_its_status(qemu, tmp_path):
    qemu(Console("Linux version 6.0.0 (gcc)\n", exit=1))
    out = boot.run(setup(tmp_path), (tmp_path / "build.log").open("wb"))
    assert out.status is Status.FAIL and not out.retryable
    assert out.reason.startswith("the console shows Linux version 6.0.0, not the built")


def test_qemu_that_fails_by_itself_is_an_error_of_the_machine(qemu, tmp_path):
    said = "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n"
    qemu(Console(said + "qemu-system-x86_64: kvm.c:3183: Assertion failed.\n", exit=134))
    out = boot.run(setup(tmp_path), (tmp_path / "build.log").open("wb"))
    assert out.status is Status.ERROR and not out.retryable
    assert out.reason == (
        "QEMU failed with exit status 134: qemu-system-x86_64: kvm.c:3183: Assertion failed."
    )


def test_qemu_holds_a_slot_while_it_runs(qemu, tmp_path):
    fake = qemu(Console(BOOTED + DONE + "\n"))
    seen = []

    @contextmanager
    def slot():
        seen.append(("take", len(fake.runs)))
        yield
        seen.append(("give", len(fake.runs)))

    boot.run(setup(tmp_path), (tmp_path / "build.log").open("wb"), slot)
    assert seen == [("take", 0), ("give", 1)]


def test_each_tries_console_is_kept(tmp_path):
    out = tmp_path
    assert boot.keep_earlier_console(out, 1) is None
    (out / "boot.log").write_text("first")
    assert boot.keep_earlier_console(out, 2) == out / "boot-try1.log"
    (out / "boot.log").write_text("second")
    boot.keep_earlier_console(out, 3)
    (out / "boot.log").write_text("third")
    assert [p.read_text() for p in boot.iter_consoles(out)] == ["first", "second", "third"]
    assert json.dumps([p.name for p in boot.iter_consoles(out)]) == (
        '["boot-try1.log", "boot-try2.log", "boot.log"]'
    )
