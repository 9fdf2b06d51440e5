"""A GitLab Code Quality report (a subset of the Code Climate issue format)
from the grouped diagnostics of a run, so that a merge request shows the
kernel's warnings and errors at their lines.

One entry per distinct diagnostic (grouping.group): its fingerprint is a hash
of `Diagnostic.key`, which holds no line number, so an edit elsewhere in the
file keeps it and GitLab does not show it as new and fixed at once. Paths are
relative to the kernel tree (diagnostics/ strips the tree and build dir);
a diagnostic without a file (Kconfig, modpost, make) points at the tree's
top-level Makefile, line 1, since GitLab requires a path. No pytest import:
the plugin and ``pytest-kbuild diagnostics --codequality`` use it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..diagnostics import Kind
from ..results import write_json
from . import grouping

NO_FILE = "Makefile"  # where a diagnostic without a file is shown
MAX_BUILDS_NAMED = 5

# GitLab's severities are info, minor, major, critical and blocker; a
# warning new against --kbuild-baseline is major: what the change brought.
SEVERITY = {Kind.ERROR.value: "critical", Kind.WARNING.value: "minor"}
NEW_WARNING = "major"


def issue(group: Mapping[str, Any]) -> dict[str, Any]:
    """The Code Quality entry of one group of identical diagnostics."""
    builds = list(group["builds"])
    named = grouping.named(builds, MAX_BUILDS_NAMED)
    flag = f" [{group['flag']}]" if group["flag"] else ""
    new = bool(group.get("new"))
    severity = (
        NEW_WARNING if new and group["kind"] == Kind.WARNING.value else SEVERITY[group["kind"]]
    )
    path = str(group["file"]) if group["file"] else NO_FILE
    line = group["line"] if isinstance(group["line"], int) and group["line"] > 0 else 1
    return {
        "type": "issue",
        "check_name": f"{group['tool']}{('/' + group['flag']) if group['flag'] else ''}",
        "description": (
            f"{'new ' if new else ''}{group['kind']}: {group['message']}{flag} "
            f"({len(builds)} build{'s' if len(builds) != 1 else ''}: {named})"
        ),
        "categories": ["Bug Risk"],
        "severity": severity,
        "fingerprint": hashlib.sha256(group["key"].encode()).hexdigest(),
        "location": {"path": path, "lines": {"begin": line}},
    }


def report(groups: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every group as an entry, in the groups' order (errors first)."""
    return [issue(g) for g in groups]


def write(path: Path, groups: Sequence[Mapping[str, Any]]) -> Path:
    """Write the report to *path* (a JSON array, as GitLab's artifact wants)."""
    write_json(Path(path), report(groups))
    return Path(path)
