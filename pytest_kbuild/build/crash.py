"""A build whose process died under it (an xdist worker killed with
SIGKILL or by the OOM killer): its make runs on in a session of its own,
its temporary build dir stays and its metadata.json says "running". The
controller, which outlives the worker, stops those processes, removes that
dir and records the crash. No pytest import.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import KbuildInfraError
from ..results import Status, TargetResult
from ..run.progress import processes
from . import record as record_file
from . import workdirs
from .record import now

GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL for the groups left behind


def process_groups_building_in(build_dir: Path) -> set[int]:
    """The process groups of the commands that build in *build_dir*: every
    make of a build carries ``O=<build dir>`` (build.py); its children share
    its group (the local runtime starts each command in its own session)."""
    needle = f"O={build_dir}"
    groups = {p.pgid for p in processes() if needle in p.argv and not p.zombie}
    groups.discard(os.getpgid(0))  # never this process's own group
    return groups


def stop_groups(groups: Iterable[int], grace: float = GRACE_SECONDS) -> None:
    """SIGTERM to each group (make passes it to its jobs), SIGKILL to what
    is still there after *grace* seconds."""
    left = set(groups)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for g in list(left):
            try:
                os.killpg(g, sig)
            except ProcessLookupError:
                left.discard(g)
        deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 1.0)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left &= _running_groups()
        if not left:
            return


def _running_groups() -> set[int]:
    """The process groups with a member that is not a zombie (one that
    only waits for its parent to collect its status has stopped)."""
    return {p.pgid for p in processes() if not p.zombie}


def record(folder: Path, target: str, skipped: Iterable[str], why: str) -> str:
    """After the death of the process that built into *folder*: stop what
    still builds in its build dir, remove that dir if it was a temporary
    one, and mark *target* ERROR (*why*) and *skipped* SKIP in its
    metadata.json. Returns what was done, for the report."""
    data = record_file.read(folder)
    if data is None:
        return "no metadata.json to find its build dir"
    done = []
    build_dir = Path(data["build_dir"]) if data.get("build_dir") else None
    if build_dir is not None:
        groups = process_groups_building_in(build_dir)
        stop_groups(groups)
        done.append(
            f"{len(groups)} process group{'s' if len(groups) != 1 else ''} of its make stopped"
        )
        if workdirs.is_temporary(build_dir):
            workdirs.remove_temporary(build_dir)
            done.append(f"temporary build dir {build_dir} removed")

    def crashed(data: dict[str, Any]) -> None:
        targets = data.setdefault("targets", {})
        targets[target] = _entry(TargetResult(target, Status.ERROR, reason=why), "worker-crashed")
        for name in skipped:
            stopped = f"the build stopped at {target}: {why}"
            targets[name] = _entry(TargetResult(name, Status.SKIP, reason=stopped), "")
        data["status"], data["error"], data["finished"] = Status.ERROR.value, why, now()

    with contextlib.suppress(KbuildInfraError):
        record_file.edit(folder, crashed)
    return "; ".join(done)


def _entry(result: TargetResult, infra: str) -> dict[str, object]:
    result.infra = infra
    return result.to_json()
