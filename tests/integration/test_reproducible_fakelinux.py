"""Reproducible by default, through the whole build on fakelinux: two builds
of the same spec into other build and results dirs give the same bytes;
with reproducible mode off the tarballs differ (so the check can fail)."""

from __future__ import annotations

import time

from pytest_kbuild import Build, Status

TARGETS = ["config", "kernel", "debugkernel", "modules", "dtbs", "headers"]
TARBALLS = ("modules.tar.xz", "dtbs.tar.xz", "headers.tar.xz")


def build(tree, tmp_path, run, **options):
    b = Build(
        tree,
        target_arch="arm64",
        toolchain="gcc",
        kconfig="defconfig",
        targets=TARGETS,
        output_dir=tmp_path / f"out-{run}",
        build_dir=tmp_path / f"objects-{run}-{'x' * run}",
        jobs=2,
        **options,
    )
    result = b.run()
    assert result.status is Status.PASS, {n: t.reason for n, t in result.targets.items()}
    return {a.name: a.sha256 for t in result.targets.values() for a in t.artifacts}, b.record


def test_two_builds_give_the_same_bytes(fakelinux, tmp_path):
    first, record = build(fakelinux, tmp_path, 1)
    time.sleep(1.1)  # other mtimes in the second build dir
    again, _ = build(fakelinux, tmp_path, 2)
    assert set(first) >= {"Image.gz", "vmlinux.xz", *TARBALLS}
    assert first == again
    assert record.reproducible["enabled"] is True


def test_with_reproducible_mode_off_the_tarballs_differ(fakelinux, tmp_path):
    first, record = build(fakelinux, tmp_path, 1, reproducible=False)
    time.sleep(1.1)
    again, _ = build(fakelinux, tmp_path, 2, reproducible=False)
    assert all(first[name] != again[name] for name in TARBALLS)
    assert record.reproducible == {"enabled": False, "variables": {}, "sources": {}, "epoch": None}
