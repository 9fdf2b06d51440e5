"""The kunit target on fakelinux through the plugin: fakelinux's `linux`
is no program, so running its "UML kernel" is an ERROR naming it, and a
failed kernel leaves kunit not run."""

from __future__ import annotations

import json

from pytest_kbuild import Build, Status


def build(tree, tmp_path, *targets):
    return Build(
        tree,
        target_arch="um",
        kconfig="tinyconfig",
        targets=list(targets),
        output_dir=tmp_path / "out",
    ).run()


def test_a_um_kernel_that_cannot_run_is_an_error_naming_it(fakelinux, tmp_path):
    result = build(fakelinux, tmp_path, "config", "kernel", "kunit")
    assert result["kernel"].status is Status.PASS
    kunit = result["kunit"]
    assert kunit.status is Status.ERROR
    assert kunit.reason.startswith(f"kunit: cannot run {tmp_path / 'out' / 'linux'}: ")
    assert kunit.cases == []
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["targets"]["kunit"]["status"] == "ERROR"
    assert "E: kunit: cannot run" in (tmp_path / "out" / "build.log").read_text()


def test_a_failed_kernel_leaves_kunit_unrun(fakelinux, tmp_path, monkeypatch):
    monkeypatch.setenv("FAIL", "kernel")
    result = build(fakelinux, tmp_path, "kunit")
    assert result["kernel"].status is Status.FAIL
    assert result["kunit"].status is Status.SKIP
    assert "kernel" in result["kunit"].reason
