"""BuildResult: all targets of one build and its metadata record (what
Build returns; the record is build/record.py's, so the type lives in build/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..results import Status, TargetResult

if TYPE_CHECKING:
    from .record import BuildRecord


@dataclass
class BuildResult:
    """All targets of one build, in build order."""

    build_id: str
    output_dir: Path
    targets: dict[str, TargetResult] = field(default_factory=dict)
    record: BuildRecord | None = None  # what metadata.json says (record.py)

    @property
    def status(self) -> Status:
        statuses = {t.status for t in self.targets.values()}
        for s in (Status.INTERRUPTED, Status.ERROR, Status.FAIL, Status.WARNING):
            if s in statuses:
                return s
        return Status.PASS if Status.PASS in statuses else Status.SKIP

    @property
    def passed(self) -> bool:
        return self.status in (Status.PASS, Status.WARNING, Status.SKIP)

    def __getitem__(self, target: str) -> TargetResult:
        return self.targets[target]
