"""Judging a boot from recorded console text (tests/unit/data/boot/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kbuild.boot import console as bootconsole
from pytest_kbuild.boot import ktap
from pytest_kbuild.boot.console import DONE, MARKER, judge
from pytest_kbuild.results import Status

DATA = Path(__file__).parent / "data" / "boot"
RELEASE = "6.1.0-test"


def console(name: str) -> str:
    return (DATA / name).read_text()


def verdict(text, *, timed_out=False, release=RELEASE):
    return judge(text, release, timed_out=timed_out, seconds=30.0, exit_status=0)


def passing(release=RELEASE):
    return (
        f"\r\n[    0.000000] Linux version {release} (root@build) (gcc 12.2.0) #1\r\n"
        f"[    0.5] Run /init as init process\r\n{MARKER}\r\n"
        f"pytest-kbuild-boot: release {release}\r\n{DONE}\r\n"
    )


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.txt")))
def test_recorded_consoles_that_are_real_boots_pass_and_the_rest_fail(name):
    # pass-<arch>.txt: real boots of matrices/boot.yaml (Debian's 6.1.y)
    release = "6.1.192" if name.startswith("pass-") else RELEASE
    v = verdict(console(name), release=release)
    assert v.status is (Status.PASS if name.startswith("pass-") else Status.FAIL), v.reason


def test_a_real_boot_is_not_the_kernel_of_another_release():
    v = verdict(console("pass-x86_64.txt"), release="6.1.193")
    assert v.reason == "the console shows Linux version 6.1.192, not the built 6.1.193"


def test_marker_and_the_built_release_pass():
    v = verdict(passing())
    assert v.passed and v.reason == f"booted Linux {RELEASE}; init ran"


def test_a_panic_fails_with_its_message_and_is_not_retried():
    v = verdict(console("panic-no-init.txt"))
    assert v.status is Status.FAIL and not v.retryable
    assert v.reason.startswith("kernel panic: No working init found.")


def test_a_hang_after_init_was_run_is_retryable():
    v = verdict(console("hang-after-init-run.txt"), timed_out=True)
    assert v.status is Status.FAIL and v.retryable
    assert v.reason == "hang: the kernel ran /init but init printed nothing within 30 s"


def test_qemu_exiting_before_init_names_its_status():
    text = console("hang-after-init-run.txt")
    v = judge(text, RELEASE, timed_out=False, seconds=1.0, exit_status=1)
    assert not v.retryable
    assert v.reason == "QEMU exited with status 1: the kernel ran /init but init printed nothing"


def test_firmware_without_a_kernel_line():
    v = verdict(console("no-version.txt"), timed_out=True)
    assert "no 'Linux version' line on the console" in v.reason


def test_no_output_at_all():
    v = verdict("", timed_out=True)
    assert v.reason.startswith("hang: no console output (the kernel never started")


def test_an_oops_is_named():
    v = verdict(console("oops.txt"), timed_out=True)
    assert v.reason.startswith("hang: kernel oops: Unable to handle kernel NULL pointer")


def test_a_different_kernel_on_the_console_fails():
    v = verdict(console("other-release.txt"))
    assert v.status is Status.FAIL
    assert v.reason == "the console shows Linux version 6.1.0-other, not the built 6.1.0-test"


def test_init_never_ran():
    v = verdict(f"Linux version {RELEASE} (gcc)\nsomething else\n")
    assert v.reason == "QEMU exited with status 0: init never ran"


def test_an_initramfs_that_was_not_unpacked():
    text = f"Linux version {RELEASE} (gcc)\nInitramfs unpacking failed: invalid magic at start\n"
    assert "the initramfs was not unpacked: Initramfs unpacking failed" in verdict(text).reason


def test_the_marker_without_the_version_line_is_not_a_boot():
    assert not bootconsole.booted(f"{MARKER}\n", RELEASE)


def test_finished_after_init_or_a_panic():
    assert bootconsole.finished(passing())
    assert bootconsole.finished(console("panic-no-init.txt"))
    assert not bootconsole.finished(console("hang-after-init-run.txt"))


def test_tail_drops_blank_lines_and_carriage_returns():
    assert bootconsole.tail("a\r\n\r\nb\r\nc\n", 2) == ["b", "c"]


# One line of each kind of crash the table knows, as a kernel prints it.
CRASH_LINES = {
    bootconsole.CRASHES[0]: "Kernel panic - not syncing: Attempted to kill init!",
    "Unable to handle kernel ": "Unable to handle kernel paging request at virtual address 0",
    "BUG: ": "BUG: kernel NULL pointer dereference, address: 0000000000000008",
    "Oops: ": "Oops: 0002 [#1] PREEMPT SMP",
    "general protection fault": "general protection fault, probably for non-canonical address",
    "Segfault with no mm": "Segfault with no mm",
    "kernel BUG at ": "kernel BUG at mm/slub.c:435!",
}


def test_the_crash_table_has_a_line_of_each_kind():
    assert set(CRASH_LINES) == set(bootconsole.CRASHES)


@pytest.mark.parametrize("pattern", list(CRASH_LINES))
def test_a_boot_and_a_kunit_run_see_the_same_crash(pattern):
    line = CRASH_LINES[pattern]
    text = f"[    0.000000] Linux version {RELEASE} (gcc)\n[    1.0] {line}\n"
    v = verdict(text, timed_out=True)
    assert v.status is Status.FAIL
    if pattern == bootconsole.CRASHES[0]:
        assert v.reason == "kernel panic: Attempted to kill init!"
    else:
        assert v.reason.startswith(f"hang: kernel oops: {line} within ")
    # KUnit: the same line after a suite that never ended names the crash.
    ktap_text = "KTAP version 1\n1..1\n    # Subtest: s\n    1..2\n    ok 1 a\n" + line + "\n"
    assert ktap.parse(ktap_text).cases[-1].reason == f"crashed: {line}"


def test_a_line_that_only_mentions_a_bug_is_no_crash():
    assert bootconsole.CRASH.search("fixed a BUG in foo") is None
    assert bootconsole.CRASH.search("debug: BUG_ON checks on") is None
