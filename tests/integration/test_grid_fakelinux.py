"""The end-of-run grid and failed builds on fakelinux, with and without xdist."""

from __future__ import annotations

import json

import pytest

from tests.support import builds_by_id

MATRIX = """\
arch: [x86_64, arm64]
toolchain: [gcc]
kconfig: [defconfig, tinyconfig]
targets: [config, kernel]
include:
  - {arch: x86_64, toolchain: gcc, name: broken, make_variables: {FAIL: kernel}}
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_run_ends_with_a_grid_and_the_failed_builds(pytester, fakelinux, monkeypatch, xdist):
    monkeypatch.setenv("WARN", "kernel")
    monkeypatch.setenv("COLUMNS", "100")
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{MATRIX}")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", *xdist)
    result.assert_outcomes(passed=9, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- kbuild grid -*",
            "       | gcc       | gcc              | gcc",
            "arch   | defconfig | defconfig-broken | tinyconfig",
            "-------+-----------+------------------+-----------",
            "arm64  | pass 1w   | -                | pass 1w",
            "x86_64 | pass 1w   | FAIL kernel 1w   | pass 1w",
            "w: warnings; +N: new vs baseline",
            "*- kbuild failed builds -*",
            "x86_64-gcc-defconfig-broken kernel FAIL: *fail.c:*error:*",
            "  reproduce: kbuild --directory=* FAIL=kernel config kernel",
        ]
    )
    summary = json.loads((pytester.path / "kbuild-results" / "results.json").read_text())
    kernel = builds_by_id(summary)["x86_64-gcc-defconfig-broken"]["targets"]["kernel"]
    assert "error:" in kernel["first_error"]
