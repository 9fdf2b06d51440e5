"""A target's verdict once its commands ran: its slice of build.log ->
diagnostics -> the target's judge -> infrastructure errors -> the baseline
-> artifacts -> --kbuild-fail-on. One function, in that order."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from .. import diagnostics
from ..diagnostics import baseline as baselines
from ..diagnostics import failon, infra, logscan
from ..errors import KbuildInfraError
from ..results import Status, TargetResult
from ..runtime.base import guest_paths
from . import artifacts, workdirs
from .steps import Made, Step


@dataclass(frozen=True)
class Span:
    """Where a target's try is: its log offsets, duration and wait for
    jobserver slots, and since when (time.time(), less a second for coarse
    mtimes) its files are new."""

    log_start: int
    log_end: int
    duration: float
    since: float
    queued: float = 0.0


def judge(
    step: Step,
    made: Made,
    span: Span,
    *,
    cache: Mapping[str, Any],
    baseline: baselines.Baseline | None = None,
    earlier: Set[str] = frozenset(),
) -> TargetResult:
    """The TargetResult of *step*, which did *made* within *span*. *cache*
    is the wrapper's hits and misses; *earlier* the diagnostics keys of the
    build's earlier targets, which the baseline does not count again."""
    make = step.make
    text = logscan.read_slice(make.log_path, span.log_start, span.log_end)
    # In a container the tools print the tree and build dir as mounted there.
    guest = guest_paths(make.bound)
    diags = diagnostics.parse(text, tree=str(make.tree), build_dir=str(step.build_dir), guest=guest)
    firsts = diagnostics.first_errors(diags)
    status, reason = step.target.judge(
        made.status,
        made.reason,
        made.problems,
        [f"{d.file}: {d.headline}" for d in firsts],
        step.build_dir,
    )
    # The compiler OOM-killed, a full disk, the engine: the machine broke it.
    broke = infra.classify(text, made.rc) if status == Status.FAIL else None
    if broke is not None:
        status, reason = Status.ERROR, infra_reason(step, broke)
    counts = diagnostics.summary(diags)
    result = TargetResult(
        step.target.name,
        status,
        span.duration,
        reason,
        warnings=counts["warnings"],
        error_count=counts["errors"],
        diagnostics=[d.to_json() for d in diags],
        log_start=span.log_start,
        log_end=span.log_end,
        cache=dict(cache),
        queued=span.queued,
    )
    if broke is not None:
        result.infra, result.retryable = broke.name, broke.retryable
    if baseline is not None:
        result.baseline = baseline.compare(
            make.spec.id, step.target.name, result.diagnostics, earlier
        )
    _errors(result, firsts, made.problems)
    return _artifacts(step, made, span, result)


def _errors(
    result: TargetResult, firsts: list[diagnostics.Diagnostic], problems: list[str]
) -> None:
    """The lines that say why a target failed or warned (an ERROR's reason
    names what broke and the log line that says so)."""
    if result.status == Status.FAIL:
        new = {d["key"]: d.get("new") for d in result.diagnostics}
        errors = [baselines.marked(d.headline, new.get(d.key)) for d in firsts]
        result.errors = errors or [result.reason]
    elif result.status == Status.WARNING:  # passed with problems: say which
        result.errors = [d.headline for d in firsts] or problems or [result.reason]


def _artifacts(step: Step, made: Made, span: Span, result: TargetResult) -> TargetResult:
    """A target that passed keeps its artifacts, then --kbuild-fail-on
    judges it; one that did not keeps what it made, for a look."""
    make, z = step.make, step.make.options.compression
    where = (step.build_dir, step.output_dir)
    if result.status not in (Status.PASS, Status.WARNING):
        artifacts.keep_made(step.target, make.arch, *where, result, span.since, z, made.failed)
        return result
    try:
        artifacts.collect(step.target, make.arch, *where, result, z, span.since)
    except KbuildInfraError as err:
        # The results dir filled up: an ERROR of the machine, said with the
        # free space, as a full build dir is.
        make.line(f"E: {err}")
        broke = infra.classify(str(err))
        result.status, result.reason = Status.ERROR, str(err)
        if broke is not None:
            result.reason, result.infra = infra_reason(step, broke), broke.name
            result.retryable = broke.retryable
        result.log_end = make.offset()
        return result
    failon.judge(result, make.options.fail_on)
    return result


def infra_reason(step: Step, broke: infra.InfraFailure) -> str:
    """What broke the target, with the free space where it matters."""
    if not broke.free_space:
        return broke.reason
    dirs = {"build dir": step.build_dir, "results dir": step.output_dir}
    return f"{broke.reason} ({workdirs.free_space(dirs)})"
