"""Copying a target's artifacts into the results."""

from __future__ import annotations

import os

from pytest_kbuild import artifacts
from pytest_kbuild.arch import Arch
from pytest_kbuild.results import Status, TargetResult
from pytest_kbuild.targets import Target


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
