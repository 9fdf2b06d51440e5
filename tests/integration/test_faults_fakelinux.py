"""Faults of the machine around the builds (issue 16): a results dir that is
a file, read-only or full, a full disk under kbuild -o, and two runs into
one results dir. Each test checks what is left on disk afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_kbuild.build.workdirs import SpaceReserve
from pytest_kbuild.run.runlock import LOCK
from tests.support import fill, small_disk

X86 = "x86_64-gcc-defconfig"
ALL = "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel, debugkernel, headers]\n"
ARTIFACTS = {"config", "bzImage", "vmlinux.xz", "System.map", "headers.tar.xz"}


def write(pytester, tree, body=ALL):
    (pytester.path / "m.yaml").write_text(f"tree: {tree}\n{body}")


def left_behind(folder: Path) -> dict[str, int]:
    """Every file under *folder* with its size (the filler excepted)."""
    return {
        str(p.relative_to(folder)): p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file() and p.name != "filler"
    }


def no_half_files(files: dict[str, int]) -> None:
    """No artifact is empty and no temporary copy or reserve is left."""
    for name, size in files.items():
        base = Path(name).name
        assert not base.endswith((".part", ".tmp")) and SpaceReserve.NAME not in base, files
        if base in ARTIFACTS:
            assert size > 0, files


@pytest.mark.parametrize("leave", [0, 16 * 1024], ids=["full", "16k-free"])
def test_a_full_results_dir_is_an_error_without_traceback_or_half_files(
    pytester, fakelinux, tmp_path, leave
):
    with small_disk(tmp_path / "disk") as disk:
        (disk / "res").mkdir()
        fill(disk, leave)
        write(pytester, fakelinux)
        result = pytester.runpytest_subprocess(
            "--kbuild-matrix=m.yaml", f"--kbuild-results={disk / 'res'}", "--junitxml=j.xml"
        )
        out = result.stdout.str() + result.stderr.str()
        files = left_behind(disk)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    assert "No space left on device" in out
    # Bug: 5 JUnit results for 4 items (a teardown error besides the failure).
    cases = list(ET.parse(pytester.path / "j.xml").getroot().iter("testcase"))
    assert len(cases) == 4 and all(c.find("error") is not None for c in cases), out
    result.stdout.fnmatch_lines(
        ["kbuild: ERROR: results.json not written: No space left on device (results dir *)"]
    )
    no_half_files(files)
    assert LOCK not in " ".join(files)  # the run's lock is given back


def test_the_reserve_lets_a_full_results_dir_keep_a_truthful_metadata(
    pytester, fakelinux, tmp_path
):
    # Room for the reserve and little else: the last metadata.json must
    # not stay "running".
    with small_disk(tmp_path / "disk", "2m") as disk:
        (disk / "res").mkdir()
        fill(disk, SpaceReserve.BYTES + 12 * 1024)
        write(pytester, fakelinux)
        result = pytester.runpytest_subprocess(
            "--kbuild-matrix=m.yaml", f"--kbuild-results={disk / 'res'}"
        )
        out = result.stdout.str() + result.stderr.str()
        meta = json.loads((disk / "res/m" / X86 / "metadata.json").read_text())
        files = left_behind(disk)
    assert "Traceback" not in out, out
    assert meta["status"] in ("PASS", "ERROR") and meta["finished"], meta
    for name, target in meta["targets"].items():
        assert target["status"] in ("PASS", "ERROR", "SKIP"), (name, target)
        if target["status"] == "ERROR":
            assert target["infra"] == "disk-full" and "0 bytes free" in target["reason"]
    no_half_files(files)


def test_kbuild_on_a_full_disk_exits_125_without_traceback(fakelinux, tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        fill(disk, 16 * 1024)
        done = subprocess.run(
            [sys.executable, "-c", "from pytest_kbuild.cli import kbuild_main; exit(kbuild_main())"]
            + ["-C", str(fakelinux), "-a", "x86_64", "-o", str(disk / "o")]
            + ["config", "kernel", "debugkernel", "headers"],
            capture_output=True,
            text=True,
        )
        files = left_behind(disk)
    assert done.returncode == 125, done
    assert "Traceback" not in done.stderr and "No space left on device" in done.stderr
    no_half_files(files)


def test_a_results_dir_that_is_a_file_or_read_only_is_a_usage_error(pytester, fakelinux, tmp_path):
    write(pytester, fakelinux)
    (tmp_path / "file").write_text("x")
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", f"--kbuild-results={tmp_path / 'file'}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --kbuild-results: '{tmp_path / 'file'}' is a file; the results dir must be a directory"
        ]
    )
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)], check=False)
    try:
        if not os.path.ismount(ro):
            pytest.skip("cannot mount a read-only tmpfs (needs root)")
        result = pytester.runpytest_subprocess(
            "--kbuild-matrix=m.yaml", f"--kbuild-results={ro / 'res'}"
        )
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --kbuild-results: cannot use '{ro / 'res'}' as the results dir: Read-only file system"
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_two_runs_never_share_a_results_dir(pytester, fakelinux, tmp_path):
    # Bug (issue 16): both passed, build.log mixed both runs.
    write(pytester, fakelinux, "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n")
    results = tmp_path / "shared"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--kbuild-matrix=m.yaml"]
    argv += [f"--kbuild-results={results}"]
    first = subprocess.Popen(
        argv,
        cwd=pytester.path,
        env={**os.environ, "FAKELINUX_SLEEP": "4"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not (results / LOCK).is_file() or not (results / LOCK).read_text():
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.05)
        started = time.monotonic()
        second = subprocess.run(argv, cwd=pytester.path, capture_output=True, text=True)
        took = time.monotonic() - started
        assert first.poll() is None  # the second stopped while the first still ran
    finally:
        out = first.communicate(timeout=120)[0].decode()
    assert second.returncode == pytest.ExitCode.USAGE_ERROR, second
    assert second.stderr.startswith(
        f"ERROR: --kbuild-results: results dir '{results}' is in use by another run "
        f"(pid {first.pid} on "
    ), second.stderr
    assert took < 20
    assert first.returncode == 0, out
    log = (results / "m" / X86 / "build.log").read_text()
    assert log.count("# target kernel") == 1  # one run's log only
    assert not (results / LOCK).exists()
