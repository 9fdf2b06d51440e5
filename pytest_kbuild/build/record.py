"""metadata.json: the typed record of one build (what was asked for, where
and from what it was made: the tree's kernelversion and git state, the host
and its hardware, the versions of the tools the runtime has, timestamps),
each target's result, what was built (kernelrelease, vmlinux's size, the
modules), and the one place that writes the file. The probes are in probes.py."""

from __future__ import annotations

import dataclasses
import datetime
import importlib.metadata
import json
import os
import platform
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..definitions import tooldir
from ..definitions.toolchain import redact
from ..errors import KbuildInfraError
from ..options import plain
from ..results import METADATA, METADATA_SCHEMA, TargetResult, write_json
from ..runtime.base import Runtime
from . import probes

if TYPE_CHECKING:
    from .make import MakeEnv

SCHEMA = METADATA_SCHEMA
VMLINUX_KEYS = ("text", "data", "bss", "text_offset")  # size(1) and System.map's _text
HARDWARE_KEYS = ("cores", "ram_bytes", "build_dir_free_bytes")


# The keys of a record a Build's caller may set (Build(record_extras=...)).
EXTRAS = ("matrix", "pytest_selection", "jobserver")


@dataclass
class BuildRecord:
    """Everything metadata.json says about one build; every key is always
    present (None when unknown), for failed and errored builds too."""

    build_id: str
    arch: str
    toolchain: dict[str, Any]
    kconfig: str
    kconfig_add: list[str]
    make_variables: dict[str, str]
    makevars: dict[str, str]
    env: dict[str, str]
    wrapper: dict[str, Any]
    runtime: dict[str, Any]
    jobs: int | None
    jobserver: dict[str, Any] | None
    targets_requested: list[str]
    options: dict[str, Any]
    reproducer: str
    schema: int = SCHEMA
    status: str = "running"
    started: str = ""
    finished: str | None = None
    error: str | None = None
    skip_reason: str | None = None  # why nothing is built (spec.skip_reason)
    build_dir: str | None = None
    tree: dict[str, Any] = field(default_factory=dict)
    host: dict[str, Any] = field(default_factory=dict)
    kconfig_sources: list[dict[str, str]] = field(default_factory=list)
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    matrix: dict[str, Any] | None = None  # file, line and origin of a matrix build
    pytest_selection: str | None = None  # the pytest command that reruns it
    left_on_worker: dict[str, Any] | None = None  # artifacts a remote worker kept
    kernelrelease: str | None = None  # include/config/kernel.release
    tools: dict[str, str | None] = field(default_factory=dict)  # key -> --version line
    vmlinux: dict[str, Any] = field(default_factory=lambda: dict.fromkeys(VMLINUX_KEYS))
    hardware: dict[str, Any] = field(default_factory=lambda: dict.fromkeys(HARDWARE_KEYS))
    modules: list[str] | None = None  # modules.order, when this build wrote one
    pytest_kbuild_version: str | None = None
    totals: dict[str, int] = field(default_factory=lambda: {"errors": 0, "warnings": 0})
    # reproducible mode: on/off and each variable it set, with where from
    reproducible: dict[str, Any] = field(default_factory=dict)

    def with_extras(self, extras: Mapping[str, Any]) -> BuildRecord:
        """This record with what the caller of a Build knows and it does not
        (the pytest layer: the matrix, the selection, the run's jobserver)."""
        unknown = sorted(set(extras) - set(EXTRAS))
        if unknown:
            raise TypeError(
                f"Build(): record_extras {unknown[0]!r} is no caller's key; accepted: "
                + ", ".join(EXTRAS)
            )
        return dataclasses.replace(self, **extras)

    @classmethod
    def initial(
        cls, make: MakeEnv, runtime: dict[str, Any], reproducer: str, tools: Iterable[str] = ()
    ) -> BuildRecord:
        """The record of a build about to start in *make* on *runtime*
        (described); *tools* are the keys of the tool versions it will record."""
        spec, options, build_dir = make.spec, make.options, make.build_dir
        toolchain = make.toolchain.describe(make.arch, make.cross)
        jobs, jobserver = (None if make.jobserver else make.jobs), make.jobserver
        remote = {"remote": redact(options.cache_remote)} if options.cache_remote else {}
        cache_dir = str(options.cache_dir) if options.cache_dir else None
        return cls(
            build_id=spec.id,
            arch=spec.arch,
            toolchain=toolchain,
            kconfig=spec.kconfig,
            kconfig_add=list(spec.kconfig_add),
            make_variables=dict(spec.make_variables),
            makevars=make.makevars(),
            env=dict(spec.env),
            wrapper={"name": spec.wrapper, "cache_dir": cache_dir, **remote},
            runtime=runtime,
            jobs=jobs,
            jobserver={"fifo": str(jobserver)} if jobserver else None,
            targets_requested=list(spec.targets),
            options={k: v for k, v in plain(options).items() if k != "cache_remote"},
            reproducer=reproducer,
            build_dir=str(build_dir) if build_dir else None,
            tree=tree_facts(make.tree, {}),
            host=host_info(),
            skip_reason=spec.skip_reason or None,
            tools=dict.fromkeys(k for k in tools if k != probes.MINIMUM),
            pytest_kbuild_version=package_version(),
            reproducible=make.repro.record(make.tree, build_dir),
        )

    def record_target(self, result: TargetResult) -> None:
        """Put *result* and its artifacts into the record."""
        self.targets[result.name] = result.to_json()
        for a in result.artifacts:
            self.artifacts[a.name] = {"size": a.size, "sha256": a.sha256, "target": result.name}

    def count(self) -> None:
        """The error and warning totals of the targets recorded so far."""
        self.totals = {
            "errors": sum(t.get("error_count", 0) for t in self.targets.values()),
            "warnings": sum(t.get("warnings", 0) for t in self.targets.values()),
        }

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def write(self, folder: Path) -> None:
        """Write metadata.json into *folder*."""
        write_metadata(folder / METADATA, self.to_json())


def runtime_facts(
    runtime: Runtime, tree: Path, toolchain: Mapping[str, Any], tools: Mapping[str, list[str]]
) -> dict[str, Any]:
    """Facts only the bound runtime knows, asked in one call: the versions of
    *tools* (key -> version command) as the build sees them, the compiler's
    among them (in a copy of the *toolchain* entry, with its number and the
    tree's minimum for it), the runtime, the tree's git state."""
    commands = dict(tools)
    if (tree / ".git").exists():
        commands.update({f"git.{k}": argv for k, argv in probes.GIT.items()})
    answers = probes.run(runtime, commands, tree)
    versions = probes.versions(answers, (k for k in tools if k != probes.MINIMUM))
    toolchain = dict(toolchain)
    toolchain["version"] = versions.get("compiler")
    toolchain["version_number"] = tooldir.parse_version(versions.get("compiler"))
    minimum = probes.first_line(answers.get(probes.MINIMUM))
    toolchain["minimum_version"] = tooldir.parse_version(minimum)
    return {
        "toolchain": toolchain,
        "runtime": runtime.describe(),
        "tree": tree_facts(tree, answers),
        "tools": versions,
    }


def tree_facts(tree: Path, answers: Mapping[str, str | None]) -> dict[str, Any]:
    """Kernel version from the top Makefile, and the git state from the
    probes' *answers* (every git key None when not a git tree)."""
    return {
        "path": str(tree),
        "kernelversion": kernelversion(tree),
        "git": probes.git_state(answers),
    }


def kernelversion(tree: Path) -> str | None:
    """VERSION.PATCHLEVEL.SUBLEVEL[EXTRAVERSION] as ``make kernelversion`` prints it."""
    try:
        head = (tree / "Makefile").read_text(errors="replace")[:4096]
    except OSError:
        return None
    fields: dict[str, str] = dict(
        re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)[ \t]*=[ \t]*(\S*)", head, re.M)
    )
    if "VERSION" not in fields:
        return None
    version = ".".join(fields.get(k, "0") or "0" for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL"))
    return version + fields.get("EXTRAVERSION", "")


def host_info() -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "machine": platform.machine(),
        "os": _os_release(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def _os_release() -> str | None:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return None
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)', text, re.M)
    return m.group(1) if m else None


def package_version() -> str | None:
    """pytest-kbuild's installed version."""
    try:
        return importlib.metadata.version("pytest-kbuild")
    except importlib.metadata.PackageNotFoundError:
        return None


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_metadata(path: Path, data: Mapping[str, Any]) -> None:
    """Write *data* to *path*. A file that cannot be written is an
    infrastructure error (KbuildInfraError): the item errors with this
    message, not an OSError traceback."""
    try:
        write_json(path, data)
    except OSError as err:
        raise KbuildInfraError(f"cannot write {path}: {err.strerror}") from None


def read(folder: Path) -> dict[str, Any] | None:
    """*folder*'s metadata.json, or None when there is none that reads as one."""
    try:
        data = json.loads((folder / METADATA).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def edit(folder: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
    """Apply *change* to *folder*'s metadata.json and write it back: the one
    way to amend the record of a build whose Build object is gone (a worker
    that crashed, a run interrupted, a remote worker's artifacts). Returns
    the data written, or None (nothing written) when there is no record.
    A record that cannot be written back raises KbuildInfraError."""
    data = read(folder)
    if data is None:
        return None
    change(data)
    write_metadata(folder / METADATA, data)
    return data


def note_left_on_worker(folder: Path, left: Mapping[str, int], limit: int) -> None:
    """Say in *folder*'s metadata.json which artifacts a remote worker kept
    (too big to send home)."""

    def note(data: dict[str, Any]) -> None:
        host = data.get("host", {}).get("hostname")
        data["left_on_worker"] = {"host": host, "files": dict(left), "limit_bytes": limit}

    edit(folder, note)
