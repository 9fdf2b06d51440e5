"""Real kernels built inside the curated images, as a user runs them:
matrices/containers.yaml under podman (-n 2), then its x86_64 build again
under docker into another results dir: the two bzImages must be identical."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ARM64_CLANG_16, ROOT, X86_64_GCC, require_engine, require_tools

MATRIX = ROOT / "matrices" / "containers.yaml"


def run_pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            f"--kbuild-matrix={MATRIX}",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def runs(linux_tree, tmp_path_factory):
    require_tools("file")
    require_engine("podman", X86_64_GCC, ARM64_CLANG_16)
    require_engine("docker", X86_64_GCC)
    work = tmp_path_factory.mktemp("containers")
    podman = run_pytest(work, f"--kbuild-tree={linux_tree}", "-n", "2", "--kbuild-results=podman")
    print(podman.stdout[-4000:])
    docker = run_pytest(
        work,
        f"--kbuild-tree={linux_tree}",
        "--kbuild-runtime=docker",
        "-k",
        "x86_64",
        "--kbuild-results=docker",
    )
    print(docker.stdout[-4000:])
    return work, podman, docker


def meta(work: Path, results: str, build_id: str) -> dict:
    return json.loads((work / results / "containers" / build_id / "metadata.json").read_text())


def test_builds_pass_in_podman_and_docker(runs):
    work, podman, docker = runs
    assert podman.returncode == 0, podman.stdout[-3000:]
    assert docker.returncode == 0, docker.stdout[-3000:]
    assert "4 passed" in podman.stdout and "2 passed" in docker.stdout


@pytest.mark.parametrize(
    ("results", "build_id", "image", "expected"),
    [
        ("podman", "x86_64-gcc-tinyconfig", "bzImage", "Linux kernel x86 boot executable bzImage"),
        ("docker", "x86_64-gcc-tinyconfig", "bzImage", "Linux kernel x86 boot executable bzImage"),
        ("podman", "arm64-clang-16-tinyconfig", "Image.gz", "Linux kernel ARM64 boot executable"),
    ],
)
def test_images_are_for_the_right_architecture(runs, results, build_id, image, expected):
    work = runs[0]
    path = work / results / "containers" / build_id / image
    out = subprocess.run(["file", "-b", "-z", str(path)], capture_output=True, text=True).stdout
    assert expected in out


def test_metadata_names_the_image_and_the_compiler_inside(runs):
    work = runs[0]
    clang = meta(work, "podman", "arm64-clang-16-tinyconfig")
    assert clang["runtime"]["name"] == "podman"
    assert clang["toolchain"]["version"].startswith("Debian clang version 16")
    pinned = clang["runtime"]["image"]["pinned"]
    assert pinned.startswith(ARM64_CLANG_16 + "@sha256:")
    assert f"--image={pinned}" in clang["reproducer"]
    assert clang["runtime"]["mounts"]["/kbuild/build"]


def test_x86_64_kernel_is_bit_for_bit_reproducible_across_engines(runs, record_property):
    work = runs[0]
    first = meta(work, "podman", "x86_64-gcc-tinyconfig")
    again = meta(work, "docker", "x86_64-gcc-tinyconfig")
    assert first["runtime"]["image"]["id"] == again["runtime"]["image"]["id"]
    # Nothing set by hand: reproducible mode's defaults, the same in both engines.
    assert first["env"] == again["env"] == {}
    assert first["reproducible"]["enabled"] is True
    assert first["reproducible"]["sources"]["KBUILD_BUILD_TIMESTAMP"] == (
        "default (mtime of the tree's Makefile)"
    )
    stamp = first["reproducible"]["variables"]["KBUILD_BUILD_TIMESTAMP"]
    assert again["reproducible"]["variables"]["KBUILD_BUILD_TIMESTAMP"] == stamp
    sums = [m["artifacts"]["bzImage"]["sha256"] for m in (first, again)]
    record_property("bzImage_sha256_podman", sums[0])
    record_property("bzImage_sha256_docker", sums[1])
    print(f"bzImage sha256: podman {sums[0]}, docker {sums[1]}")
    assert sums[0] == sums[1]
    assert first["build_dir"] != again["build_dir"]
