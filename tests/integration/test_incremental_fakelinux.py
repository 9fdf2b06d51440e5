"""A --kbuild-build-dir given again is used again, as kbuild -b's is: each
build's objects stay in <dir>/<matrix>/<build id> after the run, a second
run compiles nothing that did not change (fakelinux's FAKELINUX_JOBLOG
counts the compiles), a changed kconfig is applied, the results are always
fresh, and a build dir another process builds in is refused by name."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from pytest_kbuild.run import runlock

IDS = ("arm64-gcc-defconfig", "x86_64-gcc-defconfig")
IMAGES = {"arm64-gcc-defconfig": "Image.gz", "x86_64-gcc-defconfig": "bzImage"}
MATRIX = (
    "arch: [x86_64, arm64]\ntoolchain: [gcc]\nkconfig: [defconfig]\ntargets: [config, kernel]\n"
)


def compiles(joblog):
    """How many compiles a run started (fakelinux writes "S <time>" for each)."""
    if not joblog.exists():
        return 0
    return sum(1 for line in joblog.read_text().splitlines() if line.startswith("S "))


def run(pytester, monkeypatch, build_dir, n, *args):
    joblog = pytester.path / f"jobs-{n}"
    monkeypatch.setenv("FAKELINUX_JOBLOG", str(joblog))
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", f"--kbuild-build-dir={build_dir}", *args
    )
    return result, compiles(joblog)


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_second_run_reuses_the_objects_and_compiles_nothing(
    pytester, fakelinux, monkeypatch, tmp_path, xdist
):
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{MATRIX}")
    build_dir = tmp_path / "objects"
    first, made = run(pytester, monkeypatch, build_dir, 1, *xdist)
    first.assert_outcomes(passed=4)
    assert made >= 2 * 6  # fakelinux's six objects, for each of the two builds
    results = pytester.path / "kbuild-results" / "m"
    images = {bid: sha256(results / bid / IMAGES[bid]) for bid in IDS}
    for bid in IDS:
        # kbuild -b's layout for one build: <dir>/<matrix>/<build id> is its O=.
        objects = build_dir / "m" / bid
        assert (objects / "vmlinux").is_file() and (objects / ".config").is_file()
        assert not (objects / runlock.BUILD_LOCK).exists()  # released at the end
        meta = json.loads((results / bid / "metadata.json").read_text())
        assert meta["build_dir"] == str(objects)
    (results / IDS[0] / IMAGES[IDS[0]]).unlink()  # the results are made again

    again, made = run(pytester, monkeypatch, build_dir, 2, *xdist)
    again.assert_outcomes(passed=4)
    assert made == 0, "the second run compiled again what had not changed"
    assert {bid: sha256(results / bid / IMAGES[bid]) for bid in IDS} == images
    for bid in IDS:
        meta = json.loads((results / bid / "metadata.json").read_text())
        assert meta["status"] == "PASS" and meta["targets"]["kernel"]["status"] == "PASS"


def test_a_changed_kconfig_is_applied_to_the_objects_kept(
    pytester, fakelinux, monkeypatch, tmp_path
):
    config = pytester.path / "my.config"
    base = (fakelinux / "arch/x86/configs/x86_64_defconfig").read_text()
    matrix = "arch: [x86_64]\ntoolchain: [gcc]\nkconfig: [my.config]\ntargets: [config, kernel]\n"
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{matrix}")
    build_dir = tmp_path / "objects"
    for n, shift in enumerate((17, 14, 14)):
        config.write_text(f"{base}CONFIG_LOG_BUF_SHIFT={shift}\n")
        result, made = run(pytester, monkeypatch, build_dir, n)
        result.assert_outcomes(passed=2)
        [bid] = [p.name for p in (pytester.path / "kbuild-results" / "m").iterdir() if p.is_dir()]
        objects = build_dir / "m" / bid
        # .config is made from the kconfig on every run, never taken as left.
        assert f"CONFIG_LOG_BUF_SHIFT={shift}\n" in (objects / ".config").read_text()
        out = pytester.path / "kbuild-results" / "m" / bid / "config"
        assert f"CONFIG_LOG_BUF_SHIFT={shift}\n" in out.read_text()
        # the first run builds all, the changed option rebuilds, the same one nothing
        assert (made > 0) == (n < 2), (n, made)


def test_a_build_dir_another_process_builds_in_is_refused(
    pytester, fakelinux, monkeypatch, tmp_path
):
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{MATRIX}")
    build_dir = tmp_path / "objects"
    held = build_dir / "m" / IDS[1]
    held.mkdir(parents=True)
    lock = runlock.acquire_build_dir(held, IDS[1])
    try:
        result, _ = run(pytester, monkeypatch, build_dir, 1)
    finally:
        lock.release()
    # the other build is not held back by it
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            f"*{IDS[1]}::config ERROR: build {IDS[1]}: build dir '{held}' is in use by another "
            "build (pid *); two builds in one build dir would overwrite each other's objects: "
            "give this run a build dir of its own*",
        ]
    )
    meta = json.loads((pytester.path / "kbuild-results/m" / IDS[1] / "metadata.json").read_text())
    assert "is in use by another build" in meta["error"]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_kbuild_b_and_pytest_agree_on_a_builds_dir(pytester, fakelinux, monkeypatch, tmp_path):
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{MATRIX}")
    build_dir = tmp_path / "objects"
    first, made = run(pytester, monkeypatch, build_dir, 1, "-k", "x86_64")
    first.assert_outcomes(passed=2)
    assert made >= 6
    joblog = tmp_path / "kbuild-jobs"
    monkeypatch.setenv("FAKELINUX_JOBLOG", str(joblog))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pytest_kbuild.cli import kbuild_main; raise SystemExit(kbuild_main())",
            f"--directory={fakelinux}",
            "--target-arch=x86_64",
            "--toolchain=gcc",
            "--kconfig=defconfig",
            f"--build-dir={build_dir / 'm' / IDS[1]}",
            f"--output-dir={tmp_path / 'kbuild-out'}",
            "config",
            "kernel",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert compiles(joblog) == 0, "kbuild -b compiled again what pytest had built"
    ours = pytester.path / "kbuild-results" / "m" / IDS[1] / "bzImage"
    assert sha256(tmp_path / "kbuild-out" / "bzImage") == sha256(ours)
