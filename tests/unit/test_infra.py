"""infra.classify on real log lines: the machine's failures, told apart
from the kernel's."""

from __future__ import annotations

import pytest

from pytest_kbuild.diagnostics import infra

MAKE_ERROR = "make[2]: *** [scripts/Makefile.build:250: kernel/fork.o] Error 1"


@pytest.mark.parametrize(
    ("line", "name"),
    [
        # gcc 12 under `ulimit -v 150000` (fakelinux OOM=kernel)
        (
            "cc1: out of memory allocating 34666672 bytes after a total of 1716224 bytes",
            "out-of-memory",
        ),
        # ... and under `ulimit -v 200000`
        ("virtual memory exhausted: Cannot allocate memory", "out-of-memory"),
        # gcc's driver when the kernel's OOM killer SIGKILLs cc1
        ("gcc: fatal error: Killed signal terminated program cc1", "out-of-memory"),
        ("clang: error: unable to execute command: Killed", "out-of-memory"),
        ("make[2]: *** [scripts/Makefile.build:250: kernel/fork.o] Error 137", "out-of-memory"),
        (
            "fs/x.c:1: fatal error: error writing to /tmp/ccX.s: No space left on device",
            "disk-full",
        ),
        ("Error: OCI runtime error: crun: creating cgroup: No such device", "container-engine"),
        ("docker: Error response from daemon: no such image.", "container-engine"),
    ],
)
def test_a_machine_failure_is_named_with_its_line(line, name):
    broke = infra.classify(f"  CC      kernel/fork.o\n{line}\n{MAKE_ERROR}\n", 2)
    assert broke is not None and broke.name == name and broke.line == line
    assert broke.retryable
    assert broke.reason.startswith(f"{name.replace('-', ' ')} ({line}): ")


def test_the_kernel_failing_is_not_the_machine():
    log = "kernel/fork.c:12:3: error: 'x' undeclared\n" + MAKE_ERROR + "\n"
    assert infra.classify(log, 2) is None
    # "Killed" inside a message of the sources is not the OOM killer
    assert infra.classify("init/main.c:3: warning: Killed processes: %d\n", 2) is None


@pytest.mark.parametrize(
    ("status", "name"), [(137, "out-of-memory"), (-9, "out-of-memory"), (125, "container-engine")]
)
def test_the_exit_status_speaks_when_no_line_does(status, name):
    broke = infra.classify("", status)
    assert broke is not None and (broke.name, broke.line) == (name, f"exit status {status}")


def test_every_signature_in_the_data_file_loads():
    assert [s.name for s in infra.signatures()] == [
        "out-of-memory",
        "disk-full",
        "container-engine",
    ]
    assert all(s.fix for s in infra.signatures())


def test_a_full_disk_names_the_free_space_and_is_cleaned_before_a_retry():
    full = infra.classify("fs/x.c:1: fatal error: error writing: No space left on device")
    assert full is not None and (full.free_space, full.before_retry) == (True, "clean")
    oom = infra.classify("cc1: out of memory allocating 1 bytes")
    assert oom is not None and (oom.free_space, oom.before_retry) == (False, "")
    disk = infra.signature("disk-full")
    assert disk is not None and disk.before_retry == "clean"
    assert infra.signature("timeout") is None  # told by the build, not by a log line
