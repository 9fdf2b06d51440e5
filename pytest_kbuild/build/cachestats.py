"""A compiler wrapper's (ccache, sccache) figures for one build: counts from
its stats log between two offsets (one target, or the whole build), and the
wrapper's own stats report."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..definitions.toolchain import Wrapper
from ..diagnostics.logscan import read_slice
from ..runtime.base import Runtime


def log_path(wrapper: Wrapper, env: Mapping[str, str]) -> Path | None:
    """The stats log *wrapper* writes under the build environment *env*, or
    None if it keeps none."""
    name = wrapper.stats_log_env
    return Path(env[name]) if name else None


def log_size(log: Path | None) -> int:
    """The size of *log*, 0 if there is none yet: where the next target's
    events start."""
    return log.stat().st_size if log is not None and log.is_file() else 0


def counts(wrapper: Wrapper, log: Path | None, start: int, end: int | None) -> dict[str, int]:
    """The wrapper's figures (hits, misses...) from *log* between two offsets
    (*end* None: to the end); empty if the wrapper counts nothing."""
    if log is None or not wrapper.counters:
        return {}
    text = read_slice(log, start, end) if log.is_file() else ""
    return wrapper.counts(text)


def report(wrapper: Wrapper, runtime: Runtime, tree: Path, env: Mapping[str, str]) -> str:
    """The wrapper's own stats report, run on *runtime*; "" for a wrapper with
    no report, or when the report fails."""
    if not wrapper.stats:
        return ""
    rc, out = runtime.capture(wrapper.stats, cwd=tree, env=env)
    return out.strip() if rc == 0 else ""
