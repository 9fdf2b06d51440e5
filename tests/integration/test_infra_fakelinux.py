"""Infrastructure errors on fakelinux: a compiler that really runs out of
memory (OOM=kernel: cc1 under an address-space limit) is an ERROR of the
machine, not a FAIL of the kernel; --kbuild-retries runs it again; kbuild
exits 125 so that `git bisect run` skips such commits."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support import builds_by_id, fill, small_disk

X86 = "x86_64-gcc-defconfig"
MATRIX = "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n"
# after a timeout, later targets skip: the build stopped there
LATER = "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel, debugkernel]\n"


def write(pytester, tree, body=MATRIX):
    (pytester.path / "m.yaml").write_text(f"tree: {tree}\n{body}")


def metadata(pytester):
    path = pytester.path / "kbuild-results" / "m" / X86 / "metadata.json"
    return json.loads(path.read_text())


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_oom_killed_compiler_is_an_error_not_a_failure(pytester, fakelinux, monkeypatch, xdist):
    monkeypatch.setenv("OOM", "kernel")
    write(pytester, fakelinux)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--junitxml=j.xml", *xdist)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            f"*{X86}::kernel ERROR: out of memory (cc1: out of memory allocating *"
            "give the machine or container more memory, or run fewer jobs*",
        ]
    )
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out and "FAIL:" not in out
    kernel = metadata(pytester)["targets"]["kernel"]
    assert (kernel["status"], kernel["infra"], kernel["retryable"]) == (
        "ERROR",
        "out-of-memory",
        True,
    )
    case = next(
        c for c in ET.parse(pytester.path / "j.xml").iter("testcase") if c.get("name") == "kernel"
    )
    assert case.find("error") is not None and case.find("failure") is None


def test_a_retry_after_a_transient_oom_passes_and_keeps_the_first_try(
    pytester, fakelinux, monkeypatch
):
    once = pytester.path / "oom-once"
    monkeypatch.setenv("OOM", "kernel")
    monkeypatch.setenv("FAKELINUX_OOM_ONCE", str(once))
    write(pytester, fakelinux)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-retries=1")
    result.assert_outcomes(passed=2)
    kernel = metadata(pytester)["targets"]["kernel"]
    assert kernel["status"] == "PASS"
    [first] = kernel["attempts"]
    assert (first["status"], first["infra"]) == ("ERROR", "out-of-memory")
    log = (pytester.path / "kbuild-results/m" / X86 / "build.log").read_text()
    first_try = log.encode()[first["log_start"] : first["log_end"]].decode()
    assert "cc1: out of memory allocating" in first_try
    assert "I: kernel: trying again (try 2 of 2)" in log
    summary = json.loads((pytester.path / "kbuild-results/results.json").read_text())
    assert builds_by_id(summary)[X86]["targets"]["kernel"]["attempts"] == 2


def test_retries_never_rerun_a_kernel_failure(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("FAIL", "kernel")
    write(pytester, fakelinux)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-retries=2")
    result.assert_outcomes(passed=1, failed=1)
    assert metadata(pytester)["targets"]["kernel"]["attempts"] == []
    log = (pytester.path / "kbuild-results/m" / X86 / "build.log").read_text()
    assert "trying again" not in log


def test_a_timeout_is_retried_and_each_try_is_kept(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("FAKELINUX_SLEEP", "30")
    write(pytester, fakelinux, LATER + "timeout: 1.5\n")  # the matrix key wins
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--kbuild-timeout=600", "--kbuild-retries=1"
    )
    result.assert_outcomes(passed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            f"*{X86}::kernel ERROR: timeout after 1.5 s*make was killed*",
        ]
    )
    kernel = metadata(pytester)["targets"]["kernel"]
    assert (kernel["status"], kernel["infra"]) == ("ERROR", "timeout")
    assert [a["infra"] for a in kernel["attempts"]] == ["timeout"]
    debug = metadata(pytester)["targets"]["debugkernel"]
    assert debug["status"] == "SKIP" and "kernel" in debug["reason"]


def test_a_timeout_per_target_stops_only_that_target(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("FAKELINUX_SLEEP", "30")
    write(pytester, fakelinux, LATER + "timeout: {kernel: 1.5}\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-timeout=600")
    result.assert_outcomes(passed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines([f"*{X86}::kernel ERROR: timeout after 1.5 s*make was killed*"])
    meta = metadata(pytester)
    assert meta["targets"]["kernel"]["duration"] < 20
    assert "--target-timeout=kernel=1.5" in meta["reproducer"]
    assert "--timeout=600" in meta["reproducer"]


def test_kbuild_exits_125_on_an_infrastructure_error(fakelinux, tmp_path):
    kbuild = Path(sys.executable).with_name("kbuild")
    proc = subprocess.run(
        [str(kbuild), "-C", str(fakelinux), "-a", "x86_64", "-o", str(tmp_path / "o")]
        + ["--retries", "1", "config", "kernel"],
        capture_output=True,
        text=True,
        env={"OOM": "kernel", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 125, proc.stdout + proc.stderr
    assert "I: kernel: ERROR" in proc.stdout and "out of memory" in proc.stdout
    assert "W:   try 1 of 2: out of memory" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kbuild-retries=-1"], "--kbuild-retries: '-1' is not a whole number from 0 to 100"),
        (["--kbuild-retries=x"], "--kbuild-retries: 'x' is not a whole number from 0 to 100"),
        (["--kbuild-timeout=0"], "--kbuild-timeout: '0' is not a positive number of seconds"),
    ],
)
def test_bad_retries_and_timeouts_are_usage_errors(pytester, fakelinux, args, message):
    write(pytester, fakelinux)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])
    assert "Traceback" not in result.stderr.str()


@pytest.mark.parametrize("xdist", [[], ["-n", "1"]], ids=["serial", "xdist"])
def test_pytest_timeout_stopping_a_build_leaves_a_truthful_record(
    pytester, fakelinux, monkeypatch, xdist
):
    # pytest-timeout (signal method) raises its Failed inside make's wait:
    # make is stopped, the target is an ERROR in metadata.json, later
    # targets skip, and nothing is left running.
    pytest.importorskip("pytest_timeout")
    monkeypatch.setenv("FAKELINUX_SLEEP", "29.5")  # a value no other test sleeps
    write(pytester, fakelinux, LATER)
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--timeout=3", "--timeout-method=signal", *xdist
    )
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*Timeout (>3.0s) from pytest-timeout*"])
    meta = metadata(pytester)
    kernel, debug = meta["targets"]["kernel"], meta["targets"]["debugkernel"]
    assert (kernel["status"], kernel["infra"]) == ("ERROR", "stopped")
    assert kernel["reason"].startswith("stopped from outside the build: Failed: Timeout")
    assert 2.5 < kernel["duration"] < 20
    assert debug["status"] == "SKIP" and "kernel" in debug["reason"]
    assert meta["finished"]
    log = (pytester.path / "kbuild-results/m" / X86 / "build.log").read_text()
    assert "E: stopped from outside the build" in log
    left = subprocess.run(["pgrep", "-f", "sleep 29.5"], capture_output=True, text=True)
    assert left.stdout == "", "a sleep of the stopped build is still running"


def test_a_full_disk_is_an_error_naming_the_free_space_and_is_retried_after_make_clean(
    pytester, fakelinux, tmp_path
):
    # A real full file system: the build dir on a 1 MB tmpfs with 48 KB
    # left, enough for the config, not for the kernel's objects.
    with small_disk(tmp_path / "disk") as disk:
        build_dir = disk / "build"
        build_dir.mkdir()
        fill(disk, 48 * 1024)
        write(pytester, fakelinux)
        result = pytester.runpytest_subprocess(
            "--kbuild-matrix=m.yaml", f"--kbuild-build-dir={build_dir}", "--kbuild-retries=1"
        )
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.fnmatch_lines(
            [
                f"*{X86}::kernel ERROR: disk full (*): free space where the build dir *"
                f"(build dir {build_dir}/*: * free, results dir *: * free)",
            ]
        )
        kernel = metadata(pytester)["targets"]["kernel"]
        assert (kernel["status"], kernel["infra"]) == ("ERROR", "disk-full")
        assert [a["infra"] for a in kernel["attempts"]] == ["disk-full"]
        log = (pytester.path / "kbuild-results/m" / X86 / "build.log").read_text()
        assert " clean\n" in log  # the make clean command
        assert "I: kernel: make clean in the build dir before the next try (done): freed " in log
        assert "before the next try (done): freed 0 bytes" not in log
        assert "I: kernel: trying again (try 2 of 2)" in log
        assert (build_dir / "m" / X86 / ".config").is_file()  # make clean keeps the config
        assert "Traceback" not in result.stdout.str() + result.stderr.str()
