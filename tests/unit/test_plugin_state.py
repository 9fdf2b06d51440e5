"""The run state: one matrix load per process, shared by collection, the
xdist scheduler and the shard plan."""

from __future__ import annotations

import pytest

from pytest_kbuild.errors import KbuildUserError
from pytest_kbuild.plugin.state import KbuildState, check_baseline
from pytest_kbuild.runtime import Registry
from pytest_kbuild.settings import build_settings


def state_for(tmp_path, kernel_tree, *matrices):
    raw = {"matrix": ([str(m) for m in matrices], "cli"), "tree": (str(kernel_tree), "cli")}
    return KbuildState(build_settings(raw, tmp_path, tmp_path), Registry())


def test_builds_are_keyed_like_node_ids_and_bad_matrices_left_out(
    tmp_path, kernel_tree, write_matrix
):
    good = write_matrix("arch: [x86_64, arm64]\ntoolchain: [gcc]\n", name="m/good.yaml")
    bad = write_matrix("arch: [vax]\ntoolchain: [gcc]\n", name="bad.yaml")
    state = state_for(tmp_path, kernel_tree, good, bad)
    builds = state.builds_by_scope(tmp_path)
    assert [scope for scope, _ in builds] == [
        "m/good.yaml::arm64-gcc-defconfig",
        "m/good.yaml::x86_64-gcc-defconfig",
    ]
    assert builds[0][1].arch == "arm64"
    with pytest.raises(KbuildUserError, match="unknown arch 'vax'"):
        state.matrix(bad)


def test_a_matrix_is_read_once(tmp_path, kernel_tree, write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n")
    state = state_for(tmp_path, kernel_tree, path)
    first = state.matrix(path)
    path.write_text("arch: [vax]\n")  # a second read would fail
    assert state.matrix(path) is first
    assert [s for _, s in state.builds_by_scope(tmp_path)] == list(first.builds)


def test_runtime_override_applies_to_every_build(tmp_path, kernel_tree, write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n")
    raw = {
        "matrix": ([str(path)], "cli"),
        "tree": (str(kernel_tree), "cli"),
        "runtime": ("podman", "cli"),
    }
    state = KbuildState(build_settings(raw, tmp_path, tmp_path), Registry())
    assert [s.runtime for _, s in state.builds_by_scope(tmp_path)] == ["podman"]


def test_a_baseline_that_cannot_be_read_is_bad_input_of_the_run(tmp_path):
    raw = {"baseline": ("old", "env")}
    settings = build_settings(raw, tmp_path, tmp_path)
    with pytest.raises(KbuildUserError) as exc:
        check_baseline(settings)
    assert str(exc.value).startswith(
        f"PYTEST_KBUILD_BASELINE: {str(tmp_path / 'old')!r} does not exist; accepted: "
    )
    check_baseline(build_settings({}, tmp_path, tmp_path))  # no baseline, nothing to read
