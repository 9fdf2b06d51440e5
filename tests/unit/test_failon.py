"""failon.py: --kbuild-fail-on turns a built target with (new) warnings into
a FAIL that still counts as built for the targets that depend on it."""

from __future__ import annotations

import pytest

from pytest_kbuild import diagnostics
from pytest_kbuild.diagnostics import failon
from pytest_kbuild.results import Status, TargetResult

LOG = """\
kernel/fork.c:10:5: warning: unused variable 'x' [-Wunused-variable]
lib/a.c:7:1: warning: declaration shadows a local [-Wshadow]
"""


def target(new=(None, None), absent=None, status=Status.PASS):
    ds = [d.to_json() for d in diagnostics.parse(LOG)]
    for d, n in zip(ds, new, strict=True):
        if n is not None:
            d["new"] = n
    compared = None if new == (None, None) and absent is None else {"absent": absent}
    return TargetResult("kernel", status, diagnostics=ds, baseline=compared, warnings=2)


def test_never_keeps_a_pass():
    t = target()
    failon.judge(t, "never")
    assert t.status is Status.PASS and t.built and not t.failed_on


def test_warnings_fails_with_the_warnings_listed():
    t = target()
    failon.judge(t, "warnings")
    assert t.status is Status.FAIL and t.failed_on == "warnings" and t.built
    assert t.reason == "2 warnings (fail-on warnings)"
    assert t.errors == [
        "kernel/fork.c:10:5: warning: unused variable 'x' [-Wunused-variable]",
        "lib/a.c:7:1: warning: declaration shadows a local [-Wshadow]",
    ]


def test_new_warnings_fails_on_the_new_ones_only_marked():
    t = target(new=(False, True))
    failon.judge(t, "new-warnings")
    assert t.status is Status.FAIL and t.reason == "1 new warning (fail-on new-warnings)"
    assert t.errors == [">> lib/a.c:7:1: warning: declaration shadows a local [-Wshadow]"]


@pytest.mark.parametrize(
    "t",
    [target(new=(False, False)), target(absent="build"), target(status=Status.FAIL)],
    ids=["nothing-new", "not-in-baseline", "make-failed"],
)
def test_new_warnings_passes_when_nothing_is_known_to_be_new(t):
    before = t.status
    failon.judge(t, "new-warnings")
    assert t.status is before and not t.failed_on


def test_make_jobserver_warnings_never_fail_a_target():
    log = "make[3]: warning: jobserver unavailable: using -j1.  Add '+' to parent make rule.\n"
    ds = [d.to_json() for d in diagnostics.parse(log)]
    t = TargetResult("kernel", Status.PASS, diagnostics=ds, warnings=0)
    failon.judge(t, "warnings")
    assert t.status is Status.PASS and not t.failed_on
