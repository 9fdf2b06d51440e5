"""The curated images .ci/setup builds have every tool their recipe promises."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_kbuild.cli import images
from tests.support import ARM64_CLANG_16, X86_64_GCC, require_engine


@pytest.mark.parametrize(
    ("engine", "arch", "toolchain", "image"),
    [
        ("podman", "x86_64", "gcc", X86_64_GCC),
        ("podman", "arm64", "clang-16", ARM64_CLANG_16),
        ("docker", "x86_64", "gcc", X86_64_GCC),
    ],
)
def test_image_has_the_tools_its_recipe_promises(engine, arch, toolchain, image):
    require_engine(engine, image)
    recipe = images.Recipe.of(arch, toolchain)
    assert images.check(recipe, engine, image) == []


def test_check_names_a_missing_tool(tmp_path):
    require_engine("podman", X86_64_GCC)
    recipe = images.Recipe.of("x86_64", "gcc")
    wanting = images.Recipe(
        recipe.arch, recipe.toolchain, recipe.containerfile, {}, (*recipe.tools, "no-such-tool")
    )
    assert images.check(wanting, "podman", X86_64_GCC) == ["no-such-tool"]


def test_images_list_shows_the_built_images():
    require_engine("podman", X86_64_GCC)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pytest_kbuild.cli import main; raise SystemExit(main())",
            "images",
            "list",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert any(r[0] == X86_64_GCC + ":latest" and r[4:] == ["x86_64", "gcc"] for r in rows), rows
