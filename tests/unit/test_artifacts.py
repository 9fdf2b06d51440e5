"""Artifacts are copied whole or not at all (artifacts.py)."""

from __future__ import annotations

import os

import pytest

from pytest_kbuild import artifacts
from pytest_kbuild.arch import Arch
from pytest_kbuild.results import Status, TargetResult
from pytest_kbuild.targets import Target
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
