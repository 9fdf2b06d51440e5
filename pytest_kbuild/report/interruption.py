"""What an interrupted run (Ctrl-C, SIGTERM) tells in results.json: pytest
reports no outcome for the item that was running, so its build read as
passed by what had finished before. The builds' metadata.json know better
(the running target is INTERRUPTED there); results.json takes it from them.
No pytest import."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import Any

from ..build import record as record_file
from ..build.record import now
from ..errors import KbuildInfraError
from ..results import Scope, Status, TargetResult, results_folder
from ..spec import BuildSpec

REASON = "the run was interrupted while it ran"


def mark(
    builds: MutableMapping[str, dict[str, Any]],
    planned: Iterable[tuple[str, BuildSpec]],
    results_dir: Path,
    since: str,
) -> int:
    """Add to *builds* (results.json's) each target of this run's builds
    (*planned*: matrix path as reported, spec) that metadata.json says was
    interrupted and no report has; a build left "running" (its process died
    first) gets its next target marked, there and in its metadata.json.
    Builds that started before *since* (an earlier run's) are left alone.
    Returns how many targets were marked."""
    marked = 0
    for matrix, spec in planned:
        folder = results_folder(results_dir, matrix, spec.id)
        meta = record_file.read(folder)
        if meta is None or str(meta.get("started") or "") < since:
            continue
        if meta.get("status") == "running":
            _stopped(spec, meta)  # what results.json says, also when unwritten
            with contextlib.suppress(KbuildInfraError):  # results.json still says it
                record_file.edit(folder, functools.partial(_stopped, spec))
        targets = meta.get("targets") or {}
        key = str(Scope(matrix, spec.id))
        entry = builds.get(key) or {
            "build_id": spec.id,
            "arch": spec.arch,
            "toolchain": spec.toolchain,
            "kconfig": spec.kconfig,
            "matrix": matrix,
            "targets": {},
        }
        for name, t in targets.items():
            if name in entry["targets"] or t.get("status") != Status.INTERRUPTED.value:
                continue
            entry["targets"][name] = {
                "outcome": "interrupted",
                "status": Status.INTERRUPTED.value,
                "reason": t.get("reason") or REASON,
            }
            marked += 1
        if entry["targets"]:
            builds[key] = entry
    return marked


def _stopped(spec: BuildSpec, meta: dict[str, Any]) -> None:
    """A build left "running" (its process died first): the target it was
    running when the run stopped is INTERRUPTED, and so is the build."""
    targets = meta.setdefault("targets", {})
    running = next((t for t in spec.targets if t not in targets), None)
    if running is not None:
        targets[running] = TargetResult(running, Status.INTERRUPTED, reason=REASON).to_json()
    meta.update(status=Status.INTERRUPTED.value, finished=now())
