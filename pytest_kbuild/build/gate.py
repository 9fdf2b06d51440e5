"""Whether a target runs now: the reasons it is skipped (the build's, its
dependencies', a timeout's, fail-fast's, its arch's, its .config's, a tool
it can go without) and the host tools it cannot go without."""

from __future__ import annotations

from collections.abc import Mapping

from ..definitions import compression as compressions
from ..definitions.targets import Target, with_dependencies
from ..results import Status, TargetResult
from .make import MakeEnv
from .toolcheck import check_target_tools


def failed_dependency(name: str, done: Mapping[str, TargetResult]) -> str | None:
    """The first dependency of *name* that ran (*done*) and did not pass."""
    for dep in with_dependencies(Target.load(name).depends):
        r = done.get(dep)
        if r is not None and not r.built:
            return dep
    return None


def skip_reason(
    target: Target, make: MakeEnv, done: Mapping[str, TargetResult], timed_out: str
) -> str | None:
    """Why *target* does not run now (*done*: the targets that ran;
    *timed_out*: the one that timed out), or None."""
    failed = failed_dependency(target.name, done)
    if make.spec.skip_reason:
        return make.spec.skip_reason
    if failed is not None:
        return f"dependency {failed} did not pass"
    if timed_out:
        return f"target {timed_out} timed out: the build stopped there"
    if make.options.fail_fast and any(
        r.status == Status.FAIL and not r.built for r in done.values()
    ):
        return "fail-fast: an earlier target failed"
    return target.arch_reason(make.arch) or _config_reason(target, make) or _missing(target, make)


def _config_reason(target: Target, make: MakeEnv) -> str | None:
    if make.build_dir is None or not (target.requires_config or target.conflicts_config):
        return None
    config = make.build_dir / ".config"
    return target.config_reason(config.read_text(errors="replace") if config.is_file() else "")


def _missing(target: Target, make: MakeEnv) -> str | None:
    """Why *target* skips: a tool of its ``skip_without`` is missing."""
    rt = make.runtime
    if rt is None or not target.skip_without:
        return None
    missing = [f"{t} (Debian: {p})" for t, p in target.skip_without.items() if not rt.which(t)]
    if not missing:
        return None
    return f"{target.name} needs {', '.join(missing)}, which runtime {rt.name} does not have"


def check_tools(target: Target, make: MakeEnv) -> None:
    """Raises ToolNotFound when a host tool *target* needs (its compression's
    too) is not on the bound runtime."""
    z = compressions.get(make.options.compression)
    extra = {z.tool: z.package} if z.tool and target.compresses() else {}
    check_target_tools(make.bound, target, make.build_dir, extra)
