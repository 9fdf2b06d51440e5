"""What a CI job's log folds away: each failed build's last lines of
build.log as a collapsed section, GitHub Actions' ``::group::`` or GitLab
CI's ``section_start``/``section_end``; and, in GitLab CI, where a log is
among the job's artifacts (GitLab's JUnit report links an attachment only
for a ``<failure>``, so an ERROR's text names the log's URL instead). Outside
those two nothing is folded: the failures pytest prints have the tails.
No pytest import."""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..diagnostics import logscan
from ..results import BUILD_LOG, by_name
from . import github, grid

TAIL_LINES = 25  # of a failed target's part of build.log, as in its failure
MAX_FOLDED = grid.MAX_FAILURES
_BROKEN = ("FAIL", "ERROR", "INTERRUPTED")
_SECTION_NAME = re.compile(r"[^A-Za-z0-9_.-]")  # what GitLab accepts in a section's name


def gitlab(env: Mapping[str, str]) -> bool:
    """Running in a GitLab CI job."""
    return env.get("GITLAB_CI") == "true"


def fold(
    title: str,
    lines: Sequence[str],
    env: Mapping[str, str],
    now: Callable[[], float] = time.time,
) -> list[str]:
    """*lines* under *title*, collapsed in the job log of GitHub Actions or
    GitLab CI; as they are elsewhere."""
    if github.active(env):
        return [f"::group::{title}", *lines, "::endgroup::"]
    if gitlab(env):
        name = _SECTION_NAME.sub("_", title)[:100]
        start = f"\x1b[0Ksection_start:{int(now())}:{name}[collapsed=true]\r\x1b[0K{title}"
        return [start, *lines, f"\x1b[0Ksection_end:{int(now())}:{name}\r\x1b[0K"]
    return [title, *lines]


def failed_logs(
    builds: Mapping[str, Mapping[str, Any]],
    records: Mapping[str, Mapping[str, Any]],
    env: Mapping[str, str],
) -> list[str]:
    """In a GitHub Actions or GitLab CI job, each failed build's (results.json's
    *builds*) last lines of the target that broke it, folded; [] elsewhere.
    *records*: the builds' metadata.json by `results.names`, which say where
    in build.log each target's lines are."""
    if not (github.active(env) or gitlab(env)):
        return []
    out: list[str] = []
    named = sorted(by_name(builds).items())
    broken = [(n, b, c) for n, b in named if (c := grid.cell(b)).status in _BROKEN and c.target]
    for name, build, c in broken[:MAX_FOLDED]:
        log = build["targets"][c.target].get("log")
        if not log:
            continue
        where = ((records.get(name) or {}).get("targets") or {}).get(c.target) or {}
        try:
            text = logscan.read_slice(
                Path(log), int(where.get("log_start") or 0), where.get("log_end")
            )
        except (OSError, ValueError):
            continue  # a log gone or unreadable: its failure says where it was
        tail = logscan.tail(text, TAIL_LINES).splitlines()
        if tail:
            out += fold(f"{name} {c.target} {c.status}: last lines of {BUILD_LOG}", tail, env)
    return out


def artifact_url(path: Path, env: Mapping[str, str]) -> str:
    """In a GitLab CI job, the URL of *path* among the job's artifacts
    (``$CI_JOB_URL/artifacts/file/<path in the project dir>``); "" when not in
    GitLab CI or *path* is outside ``$CI_PROJECT_DIR``."""
    job, project = env.get("CI_JOB_URL"), env.get("CI_PROJECT_DIR")
    if not (gitlab(env) and job and project):
        return ""
    try:
        inside = Path(path).resolve().relative_to(Path(project).resolve())
    except ValueError:
        return ""
    return f"{job.rstrip('/')}/artifacts/file/{urllib.parse.quote(inside.as_posix())}"
