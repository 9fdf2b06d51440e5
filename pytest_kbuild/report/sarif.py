"""SARIF 2.1.0 from the grouped diagnostics of a run, for GitHub code
scanning (github/codeql-action/upload-sarif) and other SARIF readers.

One run, one rule per tool and flag (``compiler/-Wunused-variable``,
``modpost``, ``dt-schema``), one result per distinct diagnostic
(grouping.group) naming the builds it appears in. A result's
``partialFingerprints`` is a hash of `Diagnostic.key`, which has no line
number and no tree location, so GitHub keeps one alert for a warning that
moved or was built elsewhere. Its location is relative to the repository
(github.repository_path: GitHub's workspace holds the tree); a diagnostic
without a file in the tree (Kconfig, modpost's objects, make) is shown at
the tree's top-level Makefile with its own place in the message, since
GitHub needs a location. With a baseline every result has a
``baselineState``: new, unchanged, or (``absent=``, the baseline's fixed
diagnostics) absent. No pytest import: the plugin and ``pytest-kbuild
sarif`` use it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..build.record import package_version
from ..diagnostics import Kind, Tool, about_the_run
from ..results import write_json
from . import grouping
from .codequality import NO_FILE
from .github import repository_path

VERSION = "2.1.0"
SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
DRIVER = "pytest-kbuild"
FILE = "kbuild.sarif"  # pytest-kbuild sarif's default output, in the results dir
REPOSITORY = "%SRCROOT%"  # uriBaseId of a path relative to the repository (as CodeQL's)
TREE = "KERNEL_TREE"  # uriBaseId of a path relative to a kernel tree outside it
FINGERPRINT = "kbuildDiagnosticKey/v1"
MAX_RESULTS = 25_000  # GitHub's limit of results per run
MAX_BUILDS_NAMED = 5

# What each tool's rules are about, for a rule's description.
TOOLS = {
    Tool.COMPILER.value: "the C compiler (gcc or clang)",
    Tool.ASSEMBLER.value: "the assembler",
    Tool.LINKER.value: "the linker (ld, ld.lld)",
    Tool.MODPOST.value: "modpost (module symbols and section mismatches)",
    Tool.KCONFIG.value: "Kconfig",
    Tool.DTC.value: "the devicetree compiler (dtc)",
    Tool.DT_SCHEMA.value: "dt-schema (dtbs_check, dt_binding_check)",
    Tool.OBJTOOL.value: "objtool",
    Tool.KERNEL_DOC.value: "kernel-doc",
    Tool.MAKE.value: "make and the kernel's Makefiles",
    Tool.OTHER.value: "a script, the shell or another program of the build",
}


def workspace(env: Mapping[str, str] = os.environ, cwd: Path | None = None) -> Path:
    """The repository the locations are relative to: GitHub's workspace, else
    the current directory."""
    where = env.get("GITHUB_WORKSPACE")
    return Path(where) if where else (cwd or Path.cwd())


def rule_id(group: Mapping[str, Any]) -> str:
    """``tool/flag``, or the tool alone for a diagnostic without a flag."""
    return f"{group['tool']}/{group['flag']}" if group["flag"] else str(group["tool"])


def fingerprint(group: Mapping[str, Any]) -> str:
    """Stable over runs, line shifts and tree locations: `Diagnostic.key`'s hash."""
    return hashlib.sha256(str(group["key"]).encode()).hexdigest()


def rule(rid: str, tool: str, flag: str) -> dict[str, Any]:
    """The reportingDescriptor of rule *rid*; a result's level overrides its
    default, since one rule (``compiler``) holds errors and warnings."""
    what = TOOLS.get(tool, tool)
    text = f"{flag} from {what}" if flag else f"diagnostics of {what}"
    return {
        "id": rid,
        "shortDescription": {"text": text},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["kernel-build", tool]},
    }


def level(group: Mapping[str, Any], caused: bool = False) -> str:
    """error or warning; a note for make's warnings about how the build ran,
    and for make's errors when *caused* (another tool's error says why a
    recipe failed, which make's ``[target] Error N`` only repeats)."""
    if group["kind"] == Kind.ERROR.value:
        return "note" if caused and group["tool"] == Tool.MAKE.value else "error"
    return "note" if about_the_run(str(group["tool"]), str(group["message"])) else "warning"


def location(
    group: Mapping[str, Any], tree: str, repository: Path | None
) -> tuple[dict[str, Any], bool]:
    """The physicalLocation of *group*, and whether it is the diagnostic's own
    file (else the message says where)."""
    file = str(group["file"] or "")
    path = repository_path(tree, file, repository)
    own, base = path is not None, REPOSITORY
    if path is None:
        path = repository_path(tree, NO_FILE, repository)
    if path is None:  # the tree is not in the repository: relative to the tree
        own, base = bool(file) and not file.startswith(("{", "<")), TREE
        path = file if own else NO_FILE
    physical: dict[str, Any] = {"artifactLocation": {"uri": quote(path), "uriBaseId": base}}
    line, column = group.get("line"), group.get("column")
    if own and isinstance(line, int) and line > 0:
        physical["region"] = {"startLine": line}
        if isinstance(column, int) and column > 0:
            physical["region"]["startColumn"] = column
    return {"physicalLocation": physical}, own


def message(group: Mapping[str, Any], own: bool, state: str | None) -> str:
    """``[new |fixed ]kind: [file:line: ]message [flag] (N builds: a, b)``:
    the place only when the location is not the diagnostic's own (*own*)."""
    builds = list(group["builds"])
    named = grouping.named(builds, MAX_BUILDS_NAMED)
    flag = f" [{group['flag']}]" if group["flag"] else ""
    where = "" if own else ":".join(str(x) for x in (group["file"], group.get("line")) if x)
    mark = {"new": "new ", "absent": "fixed "}.get(state or "", "")
    return (
        f"{mark}{group['kind']}: {where + ': ' if where else ''}{group['message']}{flag} "
        f"({len(builds)} build{'s' if len(builds) != 1 else ''}: {named})"
    )


def result(
    group: Mapping[str, Any],
    index: int,
    trees: Mapping[str, str],
    repository: Path | None,
    state: str | None,
    caused: bool = False,
) -> dict[str, Any]:
    """The result of one group of identical diagnostics; *state*: its
    baselineState, or None without a baseline; *caused*: see `level`."""
    builds = list(group["builds"])
    tree = trees.get(str(builds[0]), "") if builds else ""
    where, own = location(group, tree, repository)
    out: dict[str, Any] = {
        "ruleId": rule_id(group),
        "ruleIndex": index,
        "level": level(group, caused),
        "message": {"text": message(group, own, state)},
        "locations": [where],
        "partialFingerprints": {FINGERPRINT: fingerprint(group)},
    }
    if state is not None:
        out["baselineState"] = state
    if int(group.get("count") or 0) > 0:
        out["occurrenceCount"] = int(group["count"])
    out["properties"] = {
        "tool": group["tool"],
        "builds": builds,
        "targets": list(group.get("targets") or ()),
        **({"newIn": list(group["new_in"])} if group.get("new_in") else {}),
    }
    return out


def log(
    groups: Sequence[Mapping[str, Any]],
    trees: Mapping[str, str],
    repository: Path | None,
    absent: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The SARIF log of *groups* (grouping.group) and the baseline's *absent*
    ones (grouping.fixed); *trees*: build id -> the kernel tree it built."""
    compared = bool(absent) or any(g.get("new") is not None for g in groups)
    every: list[tuple[Mapping[str, Any], str | None]] = [
        (g, ("new" if g.get("new") else "unchanged") if compared else None) for g in groups
    ]
    every += [(g, "absent") for g in absent]
    shown = every[:MAX_RESULTS]
    caused = any(g["kind"] == Kind.ERROR.value and g["tool"] != Tool.MAKE.value for g in groups)
    rules: dict[str, int] = {}
    described: list[dict[str, Any]] = []
    results = []
    for g, state in shown:
        rid = rule_id(g)
        if rid not in rules:
            rules[rid] = len(described)
            described.append(rule(rid, str(g["tool"]), str(g["flag"])))
        results.append(result(g, rules[rid], trees, repository, state, caused))
    driver: dict[str, Any] = {"name": DRIVER, "rules": described}
    version = package_version()
    if version:
        driver["version"] = version
    run: dict[str, Any] = {"tool": {"driver": driver}, "results": results}
    left = len(every) - len(shown)
    if left:
        run["invocations"] = [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {
                        "level": "warning",
                        "message": {
                            "text": f"{left} more diagnostics than GitHub takes in one run "
                            f"({MAX_RESULTS}): every one is in {grouping.DIAGNOSTICS}"
                        },
                    }
                ],
            }
        ]
    return {"$schema": SCHEMA_URI, "version": VERSION, "runs": [run]}


def write(
    path: Path,
    groups: Sequence[Mapping[str, Any]],
    trees: Mapping[str, str],
    repository: Path | None,
    absent: Sequence[Mapping[str, Any]] = (),
) -> Path:
    """Write the SARIF log to *path*."""
    write_json(Path(path), log(groups, trees, repository, absent))
    return Path(path)
