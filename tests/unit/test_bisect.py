"""How a bisect step reads a build: git bisect run's reading of kbuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kbuild.build.result import BuildResult
from pytest_kbuild.cli import bisect
from pytest_kbuild.results import Status, TargetResult

TARGETS = ["config", "kernel"]


def result(kernel: TargetResult) -> BuildResult:
    r = BuildResult("x86_64-gcc-defconfig", Path("out"))
    r.targets = {"config": TargetResult("config", Status.PASS), "kernel": kernel}
    return r


WARNING = {"kind": "warning", "message": "unused variable 'x'", "raw": ["a.c:1:5: warning: x"]}


@pytest.mark.parametrize(
    ("kernel", "diagnostic", "verdict", "why"),
    [
        (TargetResult("kernel", Status.PASS), "", "good", "PASS"),
        (
            TargetResult("kernel", Status.FAIL, reason="make failed", errors=["a.c:1: error: y"]),
            "",
            "bad",
            "kernel FAIL: a.c:1: error: y",
        ),
        (
            TargetResult("kernel", Status.FAIL, reason="make failed"),
            "",
            "bad",
            "kernel FAIL: make failed",
        ),
        (
            TargetResult("kernel", Status.ERROR, reason="out of memory (cc1: ...)"),
            "",
            "skip",
            "kernel ERROR: out of memory (cc1: ...)",
        ),
        (
            TargetResult("kernel", Status.PASS, diagnostics=[WARNING]),
            "warning: x",
            "bad",
            "kernel has 'warning: x'",
        ),
        (TargetResult("kernel", Status.PASS, diagnostics=[WARNING]), "other", "good", "no 'other'"),
        (
            TargetResult("kernel", Status.FAIL, reason="make failed"),
            "warning: x",
            "skip",
            "kernel FAIL without 'warning: x': make failed",
        ),
        (
            TargetResult("kernel", Status.ERROR, reason="timeout after 5 s"),
            "x",
            "skip",
            "kernel ERROR: timeout after 5 s",
        ),
    ],
)
def test_judge(kernel, diagnostic, verdict, why):
    assert bisect.judge(result(kernel), TARGETS, diagnostic) == (verdict, why)


def test_a_dependency_that_failed_makes_the_judged_target_bad():
    r = result(TargetResult("kernel", Status.SKIP, reason="config failed"))
    r.targets["config"] = TargetResult("config", Status.FAIL, reason="make tinyconfig failed")
    assert bisect.judge(r, TARGETS) == ("bad", "config FAIL: make tinyconfig failed")
