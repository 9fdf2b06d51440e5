"""--kbuild-fail-on: a target that make built fails when it has warnings
(all, or only those new against the baseline). No pytest import.

The target keeps its artifacts and does not block the targets that depend
on it (`TargetResult.failed_on` says why it failed): the kernel was built,
what fails is the policy, so ``-k``/``--lf`` can select exactly these.
"""

from __future__ import annotations

from ..results import Status, TargetResult
from . import MAX_ERRORS, Diagnostic, Kind
from .baseline import about_the_run, marked


def judge(result: TargetResult, policy: str) -> None:
    """Make *result* a FAIL when *policy* (``never``, ``warnings``,
    ``new-warnings``) says its warnings fail it. With ``new-warnings`` a
    target its baseline does not have (``absent``) passes: nothing is
    known to be new."""
    if policy == "never" or result.status != Status.PASS:
        return
    warnings = [
        d
        for d in result.diagnostics
        if d.get("kind") == Kind.WARNING.value and not about_the_run(d)
    ]
    if policy == "new-warnings":
        compared = result.baseline is not None and not result.baseline.get("absent")
        warnings = [d for d in warnings if d.get("new")] if compared else []
    if not warnings:
        return
    n = len(warnings)
    what = "new warning" if policy == "new-warnings" else "warning"
    result.status = Status.FAIL
    result.failed_on = policy
    result.reason = f"{n} {what}{'' if n == 1 else 's'} (fail-on {policy})"
    result.errors = [
        marked(Diagnostic.from_json(d).headline, d.get("new")) for d in warnings[:MAX_ERRORS]
    ]
    if n > MAX_ERRORS:
        result.errors.append(f"... and {n - MAX_ERRORS} more (pytest-kbuild diagnostics)")
