"""progress.py: what each process builds, and what make is doing, from /proc."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from pytest_kbuild.run import progress
from pytest_kbuild.run.progress import Process, Running


@pytest.mark.parametrize(
    "argv, said",
    [
        (
            ["aarch64-linux-gnu-gcc", "-Wp,-MD", "-c", "-o", "kernel/fork.o", "kernel/fork.c"],
            "CC kernel/fork.o",
        ),
        (
            ["clang-16", "--target=aarch64", "-c", "-okernel/exit.o", "kernel/exit.c"],
            "CC kernel/exit.o",
        ),
        (
            ["gcc", "-E", "-o", "arch/x86/kernel/vmlinux.lds", "x.lds.S"],
            "CPP arch/x86/kernel/vmlinux.lds",
        ),
        (["ld", "-m", "elf_x86_64", "-o", "vmlinux", "--whole-archive"], "LD vmlinux"),
        (["ld.lld", "-EL", "-o", ".tmp_vmlinux.kallsyms1"], "LD .tmp_vmlinux.kallsyms1"),
        (["ar", "cDPrST", "lib/lib.a", "lib/a.o"], "AR lib/lib.a"),
        # Kbuild's probes (ld-option, cc-option) write nothing anyone keeps
        (["ld.lld", "-v", "--fatal-warnings", "-o", "/dev/null"], "checking the toolchain"),
        (
            ["clang-16", "-Werror", "-c", "-x", "c", "/dev/null", "-o", "/dev/null"],
            "checking the toolchain",
        ),
        (["scripts/kconfig/conf", "--syncconfig", "Kconfig"], "conf --syncconfig Kconfig"),
        (["objcopy", "-O", "binary", "x" * 100], "objcopy -O binary " + "x" * 49 + "..."),
        (["awk", "-v", "file=a.o", "\nBEGIN {\n\ti = 0\n}\n"], "awk -v file=a.o BEGIN { i = 0 }"),
    ],
)
def test_describe_says_what_kbuild_would(argv, said):
    assert progress.describe(argv) == said


def test_paths_under_the_build_dir_are_relative():
    argv = ["gcc", "-c", "-o", "/tmp/kbuild-x/kernel/fork.o", "/src/linux/kernel/fork.c"]
    assert progress.describe(argv, ["/tmp/kbuild-x", "/src/linux"]) == "CC kernel/fork.o"
    assert progress.describe(argv, ["/tmp/kbuild"]) == "CC /tmp/kbuild-x/kernel/fork.o"


def tree(*rows):
    return [Process(pid, ppid, start, tuple(argv.split())) for pid, ppid, start, argv in rows]


def test_doing_names_the_newest_tool_not_the_drivers_helpers():
    procs = tree(
        (10, 1, 100, "make -f Makefile"),
        (11, 10, 101, "make -f scripts/Makefile.build obj=kernel"),
        (12, 11, 102, "sh -c set -e; gcc -c -o kernel/fork.o kernel/fork.c"),
        (13, 12, 103, "ccache gcc -c -o kernel/fork.o kernel/fork.c"),
        (14, 13, 104, "gcc -c -o kernel/fork.o kernel/fork.c"),
        (15, 14, 105, "/usr/libexec/gcc/x86_64-linux-gnu/12/cc1 -quiet kernel/fork.c -o /tmp/cc.s"),
        (20, 11, 99, "gcc -c -o kernel/exit.o kernel/exit.c"),
        (30, 1, 200, "gcc -c -o other.o other.c"),  # not below the root
    )
    assert progress.doing(10, procs) == "CC kernel/fork.o"
    assert progress.doing(30, procs) == ""  # nothing below it
    probe = (16, 11, 106, "ld.lld -v -o /dev/null")
    assert progress.doing(10, procs + tree(probe)) == "CC kernel/fork.o"
    assert progress.doing(11, tree((11, 1, 1, "make"), probe)) == "checking the toolchain"
    assert progress.doing(11, tree((11, 1, 1, "make"), (12, 11, 2, "make -C x"))) == "make"


def test_doing_prefers_an_object_to_a_generator_script_beside_it():
    # Seen in a real -n 2 run: the line said "awk -v file=..." while objects compiled.
    awk = (40, 11, 110, "awk -v file=include/generated/bounds.h -f scripts/x.awk")
    procs = tree((10, 1, 100, "make"), (11, 10, 101, "make"), awk)
    assert progress.doing(10, procs).startswith("awk -v file=include/generated/bounds.h")
    cc = (41, 11, 105, "gcc -c -o kernel/fork.o kernel/fork.c")
    assert progress.doing(10, procs + tree(cc)) == "CC kernel/fork.o"
    probe = (42, 11, 120, "gcc -c -o /dev/null -x c /dev/null")
    assert progress.doing(10, procs + tree(probe)).startswith("awk")


def test_doing_finds_a_real_child_process():
    child = subprocess.Popen(["sh", "-c", "sleep 30; true"])
    try:
        deadline = time.monotonic() + 10
        while progress.doing(os.getpid()) != "sleep 30" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert progress.doing(os.getpid()) == "sleep 30"
    finally:
        child.kill()
        child.wait()


def test_publish_read_and_stale_files(tmp_path):
    now = time.time()
    progress.publish(tmp_path, "gw0-1", Running("b-arm64", "kernel", now - 125, "CC x.o", "gw0"))
    progress.publish(tmp_path, "gw1-2", Running("a-x86", "config", now - 3, "", "gw1"))
    assert progress.lines(progress.read(tmp_path, 60), now) == [
        "[gw1] a-x86 config 3s",
        "[gw0] b-arm64 kernel 2m05s: CC x.o",
    ]
    old = tmp_path / "gw1-2.json"
    os.utime(old, (now - 100, now - 100))  # its process died
    (tmp_path / "junk.json").write_text("{not json")
    assert [r.build_id for r in progress.read(tmp_path, 60)] == ["b-arm64"]
    progress.publish(tmp_path, "gw0-1", None)
    assert not (tmp_path / "gw0-1.json").exists()


def test_a_target_that_waited_for_jobserver_slots_says_how_long(tmp_path):
    now = time.time()
    waiting = Running("a-x86", "config", now - 213, progress.WAITING, "gw1", 200.4)
    short = Running("a-x86", "kernel", now - 30, "CC x.o", "gw1", 0.6)
    assert progress.lines([waiting, short], now) == [
        "[gw1] a-x86 config 3m33s (3m20s waiting): waiting for a jobserver slot",
        "[gw1] a-x86 kernel 30s: CC x.o",  # under a second of it: not worth a word
    ]
    progress.publish(tmp_path, "gw1-2", waiting)
    assert progress.read(tmp_path, 60) == [waiting]


def test_elapsed_and_last_line(tmp_path):
    assert [progress.elapsed(s) for s in (0, 59, 61, 3599, 3725)] == [
        "0s",
        "59s",
        "1m01s",
        "59m59s",
        "1h02m",
    ]
    log = tmp_path / "build.log"
    log.write_text("$ make --silent bzImage\n" + "x" * 10000 + "\nlast: " + "y" * 80 + "\n\n")
    assert progress.last_line(log) == "last: " + "y" * 61 + "..."
    assert progress.last_line(tmp_path / "missing") == ""
    # the command echo of a step that has not started: not its (long) command line
    log.write_text("CC x.o\n$ sh -c 'exec 3<>\"$1\" || exit 125; shift; make' sh fifo\n")
    assert progress.last_line(log) == "starting the next command"


def test_seconds_or_off():
    from pytest_kbuild.errors import KbuildUserError
    from pytest_kbuild.parsers import seconds_or_off

    assert seconds_or_off("off", "x") == seconds_or_off("0", "x") == 0.0
    assert seconds_or_off("2.5", "x") == 2.5
    with pytest.raises(KbuildUserError, match="'-1' is not a positive number of seconds or 0/off"):
        seconds_or_off("-1", "--kbuild-progress")
