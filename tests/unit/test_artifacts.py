"""Copying a target's artifacts into the results: whole or not at all (artifacts.py)."""

from __future__ import annotations

import os

import pytest

from pytest_kbuild.build import artifacts
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.definitions.targets import Target
from pytest_kbuild.results import Status, TargetResult
from tests.support import small_disk


def test_a_copy_appears_whole_with_the_mode_of_a_new_file(tmp_path):
    src = tmp_path / "bzImage.built"
    src.write_bytes(os.urandom(100_000))
    artifacts.copy(src, tmp_path / "bzImage")
    assert (tmp_path / "bzImage").read_bytes() == src.read_bytes()
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "bzImage").stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bzImage", "bzImage.built"]


def test_a_copy_cut_short_by_a_full_disk_leaves_nothing(tmp_path):
    # Bug (issue 16): a full disk left 0-byte bzImage, vmlinux.xz and
    # headers.tar.xz that looked like results.
    src = tmp_path / "vmlinux.xz"
    src.write_bytes(os.urandom(2_000_000))
    with small_disk(tmp_path / "disk", "1m") as disk:
        with pytest.raises(OSError, match="No space left on device"):
            artifacts.copy(src, disk / "vmlinux.xz")
        assert list(disk.iterdir()) == []


def test_a_failed_target_keeps_what_it_made_but_not_what_its_failed_command_wrote(tmp_path):
    build, out = tmp_path / "build", tmp_path / "out"
    build.mkdir()
    out.mkdir()
    (build / "headers.tar.xz").write_bytes(b"cut short")
    result = TargetResult("headers", Status.FAIL)
    target, arch = Target.load("headers"), Arch.load("x86_64")
    tar = ["tar", "-caf", str(build / "headers.tar.xz"), "-C", str(build / "missing"), "."]
    artifacts.keep_made(target, arch, build, out, result, since=0.0, failed=tar)
    assert result.artifacts == [] and not (out / "headers.tar.xz").exists()
    artifacts.keep_made(target, arch, build, out, result, since=0.0)  # a failed make before it
    assert [a.name for a in result.artifacts] == ["headers.tar.xz"]
    # written before the target started: an earlier build's, not this one's
    (out / "headers.tar.xz").unlink()
    result.artifacts.clear()
    artifacts.keep_made(target, arch, build, out, result, since=4e9)
    assert result.artifacts == []


def collect_kernel(tmp_path, arch, made):
    """Collect the kernel target of *arch* from a build dir holding *made*
    (path -> mode); the results dir and the TargetResult."""
    build, out = tmp_path / "build", tmp_path / "out"
    out.mkdir()
    for rel, mode in made.items():
        (build / rel).parent.mkdir(parents=True, exist_ok=True)
        (build / rel).write_bytes(b"image")
        (build / rel).chmod(mode)
    result = TargetResult("kernel", Status.PASS)
    build.mkdir(exist_ok=True)
    artifacts.collect(Target.load("kernel"), Arch.load(arch), build, out, result)
    return out, result


def test_um_kernel_stays_a_runnable_program(tmp_path):
    out, result = collect_kernel(tmp_path, "um", {"linux": 0o755})
    assert result.status is Status.PASS
    assert [a.name for a in result.artifacts] == ["linux"]
    assert os.access(out / "linux", os.X_OK)


def test_an_image_that_is_not_a_program_is_not_made_one(tmp_path):
    out, result = collect_kernel(tmp_path, "x86_64", {"arch/x86/boot/bzImage": 0o644})
    assert result.status is Status.PASS
    assert (out / "bzImage").stat().st_mode & 0o777 == 0o644


def test_a_missing_image_fails_the_target_naming_it(tmp_path):
    _, result = collect_kernel(tmp_path, "um", {})
    assert result.status is Status.FAIL
    assert result.reason == "kernel passed make but linux was not produced"
