"""Status, per-target results, artifacts and the results-dir names.

The per-build BuildResult holds a build record, so it is build/result.py's."""

from __future__ import annotations

import enum
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import NotAResultsDir

METADATA = "metadata.json"
METADATA_SCHEMA = 1  # of metadata.json (build/record.py writes it, baseline.py reads it)
BUILD_LOG = "build.log"
COMMAND_ECHO = "$ "  # build.log's prefix of each command, written before it runs
REPRODUCER = "reproducer.sh"  # the reproducer as a script, beside build.log
SUMMARY = "results.json"
# Of results.json (plugin/reporting.py writes it, report/merge.py too).
# 2: a target's duration is a number of seconds (1 wrote it as a string).
# 3: a target's duration is the time it ran; its waits for jobserver slots
#    are its "queued" seconds (2 counted them in the duration).
# 4: builds are keyed by their scope, ``<matrix>::<build id>``, and each
#    says its "build_id" (3 keyed them by build id: two matrices' builds of
#    the same id were one).
SUMMARY_SCHEMA = 4
# What readers that never look at durations (a baseline, a durations file)
# accept: an earlier run may come from an earlier version.
SUMMARY_SCHEMAS_READ = (1, 2, 3, 4)


class Status(str, enum.Enum):
    """Outcome of one target (or one build: the worst of its targets)."""

    PASS = "PASS"
    # Passed with problems (kselftest dirs that did not build): the
    # artifacts are there, dependents run, the build does not fail.
    WARNING = "WARNING"
    FAIL = "FAIL"
    SKIP = "SKIP"
    ERROR = "ERROR"
    INTERRUPTED = "INTERRUPTED"


@dataclass(frozen=True)
class Artifact:
    """A file kept in the results directory."""

    name: str
    path: str
    size: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> Artifact:
        digest = hashlib.sha256()
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        return cls(path.name, str(path), path.stat().st_size, digest.hexdigest())


@dataclass
class TargetResult:
    """What one target did: status, its own duration, why, and what it kept."""

    name: str
    status: Status
    duration: float = 0.0  # seconds it ran, its waits for jobserver slots apart
    reason: str = ""
    errors: list[str] = field(default_factory=list)
    warnings: int = 0  # distinct warnings (diagnostics.summary)
    error_count: int = 0  # distinct errors (diagnostics.summary); *errors* are headlines
    diagnostics: list[dict[str, Any]] = field(default_factory=list)  # Diagnostic.to_json()s
    artifacts: list[Artifact] = field(default_factory=list)
    log_start: int = 0
    log_end: int = 0
    cache: dict[str, int] = field(default_factory=dict)  # compiler cache figures
    # Against --kbuild-baseline (baseline.py): new/fixed/unchanged counts, or
    # absent; None without a baseline.
    baseline: dict[str, Any] | None = None
    failed_on: str = ""  # the --kbuild-fail-on policy that failed a built target
    # An ERROR of the machine (infra.py: out-of-memory, disk-full, timeout,
    # ...) and whether --kbuild-retries may run the target again.
    infra: str = ""
    retryable: bool = False
    # The earlier tries of this target that ended in a retryable ERROR
    # (status, reason, duration, their bytes of build.log), oldest first.
    attempts: list[dict[str, Any]] = field(default_factory=list)
    # The boot and kunit targets' facts (boot/qemu.py, boot/kunit.py): QEMU version,
    # machine, firmware, the exact command, the consoles; None for others.
    boot: dict[str, Any] | None = None
    # The test cases a target ran (the kunit target's KUnit cases, cases.py
    # reports them): {"suite", "name", "status" (PASS, FAIL, SKIP, ERROR),
    # "reason", "diagnostics" (KTAP lines)} each, in the order they ran.
    cases: list[dict[str, Any]] = field(default_factory=list)
    # Seconds its commands waited for a slot of the shared jobserver (the
    # other builds held them) before they ran; not in *duration*.
    queued: float = 0.0

    @property
    def built(self) -> bool:
        """make did its work (a fail-on policy may still fail the target)."""
        return self.passed or bool(self.failed_on)

    @property
    def passed(self) -> bool:
        """PASS, or WARNING (passed with problems)."""
        return self.status in (Status.PASS, Status.WARNING)

    def attempt(self) -> dict[str, Any]:
        """This result as one entry of a retried target's ``attempts``."""
        keep = ("status", "reason", "duration", "queued", "infra", "log_start", "log_end")
        d = self.to_json()
        return {k: d[k] for k in keep}

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = self.status.value
        d["duration"] = round(self.duration, 3)
        d["queued"] = round(self.queued, 3)
        d["artifacts"] = [a.name for a in self.artifacts]
        return d


@dataclass(frozen=True)
class Scope:
    """A build's place in a run: its matrix as pytest names it (relative to
    the rootdir) and its build id. As text, ``<matrix>::<build id>``: the
    node id of its BuildNode, the key of remembered and --kbuild-durations
    durations and of a shard plan; its items are ``<scope>::<target>``."""

    matrix: str
    build_id: str

    def __str__(self) -> str:
        return f"{self.matrix}::{self.build_id}"

    @classmethod
    def parse(cls, text: str) -> Scope:
        """The scope of *text* (``m.yaml::x86_64-gcc-defconfig``); ValueError
        when it has no ``::``."""
        matrix, sep, build_id = text.rpartition("::")
        if not sep:
            raise ValueError(f"{text!r} is not <matrix>::<build id>")
        return cls(matrix, build_id)

    @classmethod
    def of_item(cls, nodeid: str) -> tuple[Scope, str]:
        """The scope and target of a build item's node id."""
        scope, _, target = nodeid.rpartition("::")
        return cls.parse(scope), target

    def item(self, target: str) -> str:
        """The node id of this build's item *target*."""
        return f"{self}::{target}"

    def folder(self, top: Path) -> Path:
        """This build's folder under *top*: results_folder()."""
        return results_folder(top, self.matrix, self.build_id)


def scope_of(nodeid: str) -> str:
    """All of a node id before its last ``::``: a build item's scope, and
    for any other test what xdist's loadscope groups by."""
    return nodeid.rpartition("::")[0]


def results_folder(top: Path, matrix: str | Path, build_id: str) -> Path:
    """``<top>/<matrix stem>/<build id>``: a build's folder in a results dir
    (and, the same shape, its objects under --kbuild-build-dir)."""
    return Path(top) / Path(matrix).stem / build_id


def file_mode() -> int:
    """The mode a plain new file gets (0666 less the umask): a temporary
    file's 0600 would hide results from CI servers once renamed."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_json(path: Path, data: Mapping[str, Any] | list[Any]) -> None:
    """Write *data* atomically: a reader (or a killed run) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2, sort_keys=False, default=str)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def totals(builds: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """``{"builds": n, "<outcome>": count, ...}`` over every target of *builds*."""
    outcomes: dict[str, int] = {}
    for build in builds.values():
        for t in build["targets"].values():
            outcomes[t["outcome"]] = outcomes.get(t["outcome"], 0) + 1
    return {"builds": len(builds), **outcomes}


def headline(builds: Mapping[str, Mapping[str, Any]]) -> str:
    """``3 builds (14 passed, 1 failed)``: the run's totals in one line."""
    s = totals(builds)
    parts = ", ".join(f"{n} {k}" for k, n in s.items() if k != "builds")
    return f"{s['builds']} build{'s' * (s['builds'] != 1)} ({parts})"


def build_id_of(key: str, build: Mapping[str, Any]) -> str:
    """The build id of results.json's build *key*: its ``build_id`` (schema
    4), else the key itself (schemas 1 to 3 keyed builds by build id)."""
    return str(build.get("build_id") or key.rpartition("::")[2])


def names(builds: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each of results.json's *builds* (by key) named for people: its build
    id, or ``<matrix stem>/<build id>`` when the builds come from more than
    one matrix (two matrices may each have an ``x86_64-gcc-defconfig``)."""
    several = len({str(b.get("matrix", "")) for b in builds.values()}) > 1
    return {
        key: f"{Path(str(b.get('matrix', ''))).stem}/{build_id_of(key, b)}"
        if several
        else build_id_of(key, b)
        for key, b in builds.items()
    }


def by_name(builds: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """*builds* keyed by `names` (what a grid, a summary or a list shows)."""
    named = names(builds)
    return {named[key]: b for key, b in builds.items()}


def summary_builds(results_dir: Path) -> dict[str, dict[str, Any]]:
    """The builds of *results_dir*'s results.json ({} when it has none)."""
    path = results_dir / SUMMARY
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise NotAResultsDir(str(path), f"cannot be read as JSON: {err}") from None
    builds = data.get("builds") if isinstance(data, dict) else None
    return builds if isinstance(builds, dict) else {}
