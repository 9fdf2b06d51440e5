"""GitHub Actions: a run's diagnostics as workflow commands, which GitHub
shows on the pull request's diff, and its summary as Markdown for the job's
step summary page.

GitHub shows at most 10 errors and 10 warnings of one step (50 per job) and
drops the rest silently, so the commands are ranked: errors first, then
warnings new against the baseline, then the other warnings, each kind cut
at 10, and one last ``::notice`` says how many were left out and where
they all are. A file is given relative to the repository (GitHub's
workspace) so that the annotation lands on the diff; a diagnostic outside
the workspace, or without a file, has none. The step summary is cut below
GitHub's 1 MiB with a line that says so. No pytest import: the plugin
(when ``GITHUB_ACTIONS=true``) uses it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..diagnostics import Kind, Tool, about_the_run
from ..errors import NotAResultsDir
from ..results import SUMMARY, headline, summary_builds
from . import grid, grouping
from .grouping import DIAGNOSTICS, lines

MAX_PER_KIND = 10  # GitHub's limit of errors, and of warnings, shown per step
SUMMARY_LIMIT = 1 << 20  # GitHub's limit of one step's summary, in bytes
MAX_BUILDS_NAMED = 3
MAX_DIAGNOSTIC_LINES = 20  # in the step summary
CUT = "\n\n*(cut here: the step summary is at most 1 MiB; results.json has everything)*\n"


def active(env: Mapping[str, str]) -> bool:
    """Running as a step of a GitHub Actions job."""
    return env.get("GITHUB_ACTIONS") == "true"


def _data(text: str) -> str:
    """A workflow command's message, escaped as the runner reads it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value (file=, title=), escaped."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def repository_path(tree: str, file: str, workspace: Path | None) -> str | None:
    """*file* (relative to the kernel tree *tree*) relative to *workspace*,
    or None when the tree is not inside it, or the file is not a file of the
    tree (an object of the build dir), or there is none."""
    if not file or workspace is None or not tree:
        return None
    try:
        inside = Path(tree).resolve().relative_to(workspace.resolve())
    except ValueError:
        return None
    if not (Path(tree) / file).is_file():
        return None
    return (inside / file).as_posix()


def command(group: Mapping[str, Any], path: str | None) -> str:
    """The ``::error`` or ``::warning`` command of one group of identical
    diagnostics (grouping.group), at *path* in the repository if known."""
    kind = "error" if group["kind"] == Kind.ERROR.value else "warning"
    props: list[str] = []
    if path:
        props.append(f"file={_property(path)}")
        for key, name in (("line", "line"), ("column", "col")):
            if isinstance(group.get(key), int) and group[key] > 0:
                props.append(f"{name}={group[key]}")
    builds = list(group["builds"])
    named = grouping.named(builds, MAX_BUILDS_NAMED)
    flag = f" [{group['flag']}]" if group["flag"] else ""
    new = "new " if group.get("new") else ""
    title = f"{new}{group['tool']} {kind}{flag}: {len(builds)} build{'s' * (len(builds) != 1)}"
    props.append(f"title={_property(title)}")
    # Without a place on the diff, the message says where it is.
    where = ":".join(str(x) for x in (group["file"], group["line"]) if x) if not path else ""
    message = f"{where + ': ' if where else ''}{group['message']}{flag} ({named})"
    return f"::{kind} {','.join(props)}::{_data(message)}"


def workflow_commands(
    groups: Sequence[Mapping[str, Any]],
    trees: Mapping[str, str],
    workspace: Path | None,
) -> list[str]:
    """The workflow commands of *groups*, best first, at most 10 of each
    kind, then a ``::notice`` of what was left out. *trees*: build id ->
    the kernel tree it built (metadata.json's ``tree.path``)."""
    errors = [g for g in groups if g["kind"] == Kind.ERROR.value]
    # make's "[target] Error N" only repeats that a recipe failed: shown
    # only when no other error says why.
    causes = [g for g in errors if g["tool"] != Tool.MAKE.value]
    errors = causes or errors
    # make's jobserver warnings are about how the build ran, not the diff.
    warnings = [
        g
        for g in groups
        if g["kind"] != Kind.ERROR.value and not about_the_run(g["tool"], g["message"])
    ]
    warnings.sort(key=lambda g: not g.get("new"))  # stable: grouping's order otherwise
    shown = errors[:MAX_PER_KIND] + warnings[:MAX_PER_KIND]
    out = []
    for g in shown:
        tree = trees.get(str(g["builds"][0]), "") if g["builds"] else ""
        out.append(command(g, repository_path(tree, str(g["file"]), workspace)))
    left = len(errors) + len(warnings) - len(shown)
    if left:
        out.append(
            f"::notice title=kbuild::{left} more diagnostic{'s' * (left != 1)} than GitHub "
            f"shows ({MAX_PER_KIND} errors and {MAX_PER_KIND} warnings per step): "
            f"every one is in {DIAGNOSTICS} of the results dir"
        )
    return out


def step_summary(
    builds: Mapping[str, Mapping[str, Any]],
    groups: Sequence[Mapping[str, Any]],
    headline: str,
    baseline: str = "",
) -> str:
    """The run as Markdown: *headline* (the totals), the grid, the failed
    builds with their first error and reproducer, the *baseline* line and
    the first diagnostics; under 1 MiB."""
    parts = [f"## kbuild: {headline}\n"]
    parts.append("```\n" + "\n".join(grid.render(builds, grid.MAX_WIDTH)) + "\n```\n")
    broken = grid.failures(builds, grid.MAX_WIDTH)
    if broken:
        parts.append("### Failed builds\n\n```\n" + "\n".join(broken) + "\n```\n")
    if baseline:
        parts.append(f"**{baseline}**\n")
    if groups:
        shown = lines(groups, grid.MAX_WIDTH, MAX_DIAGNOSTIC_LINES)
        parts.append(f"### Diagnostics ({len(groups)})\n\n```\n" + "\n".join(shown) + "\n```\n")
    text = "\n".join(parts)
    data = text.encode()
    if len(data) <= SUMMARY_LIMIT:
        return text
    room = SUMMARY_LIMIT - len(CUT.encode())
    return data[:room].decode(errors="ignore") + CUT


def summary_of(results_dir: Path) -> str:
    """The step summary of a results dir (a merged one too), as a run that
    wrote it prints it: for a job that merges shards."""
    builds = summary_builds(results_dir)
    if not builds:
        raise NotAResultsDir(str(results_dir), f"has no {SUMMARY} with builds")
    return step_summary(builds, grouping.summarise(results_dir), headline(builds))


def append_summary(text: str, env: Mapping[str, str] = os.environ) -> str:
    """Append *text* to ``$GITHUB_STEP_SUMMARY``; "" when done (or when no
    such file is set), else why not: a report that cannot be written never
    fails the run."""
    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return ""
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as err:
        return f"GITHUB_STEP_SUMMARY={target} not written: {err.strerror or err}"
    return ""
