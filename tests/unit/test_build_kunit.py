"""The kunit target inside a Build: a FakeRuntime for Kbuild, a FakeQemu on
PATH for x86_64, and for um a fake `linux` that prints a console, as the
built User-mode Linux would."""

from __future__ import annotations

import json

import pytest

from pytest_kbuild.boot import kunit
from pytest_kbuild.build.build import Build
from pytest_kbuild.results import METADATA, Status
from tests.unit.fakeqemu import Console, FakeQemu

RELEASE = "6.1.0-kunit"
HEAD = f"Linux version {RELEASE} (gcc)\nKTAP version 1\n1..2\n"
EXAMPLE = """\
    KTAP version 1
    # Subtest: example
    1..2
    # example_simple_test: initializing
    ok 1 example_simple_test
    ok 2 example_skip_test # SKIP this test should be skipped
ok 1 example
"""
BITS_PASS = """\
    KTAP version 1
    # Subtest: bits-test
    1..1
    ok 1 genmask_test
ok 2 bits-test
"""
BITS_FAIL = """\
    KTAP version 1
    # Subtest: bits-test
    1..1
    # genmask_test: EXPECTATION FAILED at lib/test_bits.c:16
    Expected 3ul == GENMASK(1, 0), but
    not ok 1 genmask_test
not ok 2 bits-test
"""
PASSING = HEAD + EXAMPLE + BITS_PASS + "reboot: Restarting system\n"


def stamped(text):
    return "".join(f"[    0.{i:06d}] {line}\r\n" for i, line in enumerate(text.splitlines()))


@pytest.fixture
def kunit_build(kernel_tree, fake_runtime, tmp_path, monkeypatch):
    """kunit_build(*consoles, arch="x86_64") -> (Build, FakeQemu): tinyconfig
    with targets config, kernel, kunit; the fake prints *consoles* in turn."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    build_dir = tmp_path / "build"

    def make(*consoles, arch="x86_64"):
        if arch == "um":
            fake = FakeQemu(build_dir, "linux", list(consoles))
        else:
            fake = FakeQemu(bin_dir, "qemu-system-x86_64", list(consoles)).install()

        def effects(call):
            if call.goal in ("bzImage", "linux"):
                release = build_dir / "include" / "config" / "kernel.release"
                release.parent.mkdir(parents=True, exist_ok=True)
                release.write_text(RELEASE + "\n")
            if call.goal == "linux":
                fake.install()  # the built UML kernel, a program

        fake_runtime.on_run = effects
        build = Build(
            kernel_tree,
            target_arch=arch,
            kconfig="tinyconfig",
            targets=["config", "kernel", "kunit"],
            runtime=fake_runtime,
            jobs=1,
            timeout=2,
            output_dir=tmp_path / "out",
            build_dir=build_dir,
        )
        return build, fake

    return make


def test_x86_64_runs_under_qemu_without_an_initramfs_and_reports_every_case(kunit_build):
    build, qemu = kunit_build(Console(stamped(PASSING)))
    result = build.run()["kunit"]
    assert result.status is Status.PASS, result.reason
    assert result.reason == "2 suites, 3 cases: 2 passed, 1 skipped"
    assert [(c["suite"], c["name"], c["status"]) for c in result.cases] == [
        ("example", "example_simple_test", "PASS"),
        ("example", "example_skip_test", "SKIP"),
        ("bits-test", "genmask_test", "PASS"),
    ]
    (argv,) = qemu.runs
    assert "-initrd" not in argv and "-no-reboot" in argv
    assert argv[argv.index("-append") + 1] == (
        "console=ttyS0 panic=-1 kunit.enable=1 kunit_shutdown=reboot"
    )
    meta = json.loads((build.output_dir / METADATA).read_text())
    facts = meta["targets"]["kunit"]["boot"]
    assert facts["qemu"] == "QEMU emulator version 7.2.99 (fake)"
    assert facts["machine"] == "pc" and facts["console"] == kunit.CONSOLE
    assert facts["ktap"] == {"suites": 2, "cases": 3, "pass": 2, "fail": 0, "skip": 1, "error": 0}
    assert meta["targets"]["kunit"]["cases"] == result.cases
    assert meta["artifacts"]["kunit.log"]["target"] == "kunit"
    assert (build.output_dir / "kunit.log").read_bytes().decode() == stamped(PASSING)


def test_um_runs_the_built_linux_itself(kunit_build):
    build, linux = kunit_build(Console(PASSING), arch="um")
    result = build.run()["kunit"]
    assert result.status is Status.PASS, (result.reason, result.errors)
    (argv,) = linux.runs
    assert argv[1:] == list(kunit.UML_ARGS)
    assert argv[0] == str(build.output_dir / "linux")
    assert result.boot is not None and result.boot["machine"] == "uml"
    assert result.boot["qemu"] is None and len(result.cases) == 3


def test_a_failed_case_fails_the_target_with_its_diagnostics(kunit_build):
    build, _ = kunit_build(Console(HEAD + EXAMPLE + BITS_FAIL))
    result = build.run()["kunit"]
    assert result.status is Status.FAIL
    assert result.reason == "1 of 3 KUnit cases failed; first: bits-test.genmask_test"
    failed = result.cases[-1]
    assert failed["status"] == "FAIL"
    assert failed["diagnostics"] == [
        "# genmask_test: EXPECTATION FAILED at lib/test_bits.c:16",
        "Expected 3ul == GENMASK(1, 0), but",
    ]
    assert result.errors[0] == (
        "bits-test.genmask_test: # genmask_test: EXPECTATION FAILED at lib/test_bits.c:16"
    )
    assert result.errors[-1].startswith("run again: ")


def test_a_kernel_that_hangs_mid_suite_makes_the_running_case_an_error(kunit_build):
    hang = HEAD + EXAMPLE + "    KTAP version 1\n    # Subtest: bits-test\n    1..1\n"
    hang += "    # genmask_test: initializing\n"
    build, _ = kunit_build(Console(hang, then="hang"))
    result = build.run()["kunit"]
    assert result.status is Status.FAIL
    assert result.reason.endswith("first: bits-test.genmask_test (stopped after the 2 s timeout)")
    assert result.cases[-1]["status"] == "ERROR"
    assert result.boot is not None and result.boot["timed_out"] is True


def test_no_ktap_is_an_error_with_the_console_tail(kunit_build):
    console = f"Linux version {RELEASE} (gcc)\nkunit: disabled\nreboot: Restarting system\n"
    build, _ = kunit_build(Console(console))
    result = build.run()["kunit"]
    assert result.status is Status.ERROR
    assert result.reason == "no KTAP output on the console"
    assert "kunit: disabled" in result.errors and result.cases == []
    assert (build.output_dir / "kunit.log").read_text() == console


def test_missing_qemu_is_an_error_naming_the_package(kunit_build, tmp_path, monkeypatch):
    build, _ = kunit_build(Console(PASSING))
    (tmp_path / "bin" / "qemu-system-x86_64").unlink()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    result = build.run()["kunit"]
    assert result.status is Status.ERROR
    assert "'qemu-system-x86_64' not found on PATH; install Debian's qemu-system-x86" in (
        result.reason
    )


def test_an_arch_without_a_machine_is_an_error(kernel_tree, fake_runtime, tmp_path):
    fake_runtime.produces["zImage"] = ["arch/sparc/boot/zImage"]
    release = tmp_path / "build" / "include" / "config" / "kernel.release"

    def effects(call):
        if call.goal == "zImage":
            release.parent.mkdir(parents=True, exist_ok=True)
            release.write_text(RELEASE)

    fake_runtime.on_run = effects
    build = Build(
        kernel_tree,
        target_arch="sparc",
        kconfig="tinyconfig",
        targets=["kunit"],
        runtime=fake_runtime,
        jobs=1,
        output_dir=tmp_path / "out",
        build_dir=tmp_path / "build",
    )
    result = build.run_target("kunit")
    assert result.status is Status.ERROR
    assert result.reason.startswith("kunit: no QEMU machine for arch sparc (data/boot/)")
