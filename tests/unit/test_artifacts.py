"""Copying a target's artifacts into the results."""

from __future__ import annotations

import os

from pytest_kbuild import artifacts
from pytest_kbuild.arch import Arch
from pytest_kbuild.results import Status, TargetResult
from pytest_kbuild.targets import Target


def test_um_kernel_stays_a_runnable_program(tmp_path):
    build, out = tmp_path / "build", tmp_path / "out"
    build.mkdir()
    out.mkdir()
    (build / "linux").write_bytes(b"\x7fELF")
    (build / "linux").chmod(0o755)
    result = TargetResult("kernel", Status.PASS)
    artifacts.collect(Target.load("kernel"), Arch.load("um"), build, out, result)
    assert result.status is Status.PASS
    assert [a.name for a in result.artifacts] == ["linux"]
    assert os.access(out / "linux", os.X_OK)


def test_an_image_that_is_not_a_program_is_not_made_one(tmp_path):
    build, out = tmp_path / "build", tmp_path / "out"
    (build / "arch/x86/boot").mkdir(parents=True)
    out.mkdir()
    (build / "arch/x86/boot/bzImage").write_bytes(b"MZ")
    (build / "arch/x86/boot/bzImage").chmod(0o644)
    result = TargetResult("kernel", Status.PASS)
    artifacts.collect(Target.load("kernel"), Arch.load("x86_64"), build, out, result)
    assert result.status is Status.PASS
    assert (out / "bzImage").stat().st_mode & 0o777 == 0o644


def test_a_missing_image_fails_the_target_naming_it(tmp_path):
    result = TargetResult("kernel", Status.PASS)
    artifacts.collect(Target.load("kernel"), Arch.load("um"), tmp_path, tmp_path, result)
    assert result.status is Status.FAIL
    assert result.reason == "kernel passed make but linux was not produced"
