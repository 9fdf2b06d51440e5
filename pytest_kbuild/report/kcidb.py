"""KernelCI's KCIDB: a results dir as one KCIDB I/O document (schema 5.3,
kcidb-io's latest): the checkout (the tree's git commit, describe, branch
and https remote, from the builds' metadata.json), one build per matrix
build, and one test per target of a test kind (boot, kunit, kselftest),
each KUnit case a test of its own at ``kunit.<suite>.<case>``.

Ids are ``<origin>:<hash>``, the hash of the tree's revision (its commit,
``+dirty`` when git describe says so), the matrix stem and the build id (a
test's: and its target and case): the same spec at the same commit has the
same ids in every run, so submitting a re-run updates the objects of the
first instead of adding new ones. Statuses and test paths come from the
table of data/report/kcidb.yaml (kcidbtable.py). A file's URL is its path
in the results dir after a base URL (where CI serves the dir); without one
the document has no URLs, since KCIDB takes absolute URLs only. No pytest
import: plugin/reporting.py and ``pytest-kbuild kcidb`` use it; kcidb-io
is a test dependency only (the tests validate what this writes against its
latest schema).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..definitions.targets import Target
from ..errors import KbuildError, KcidbError
from ..results import (
    BUILD_LOG,
    METADATA,
    METADATA_SCHEMA,
    REPRODUCER,
    SUMMARY,
    SUMMARY_SCHEMA,
    Scope,
    Status,
    build_id_of,
    write_json,
)
from . import cases, grid
from .kcidbtable import NOT_RUN, RUNNING, highest, kcidb_status, path_part, table

VERSION = {"major": 5, "minor": 3}  # the KCIDB schema the document follows
DOCUMENT = "kcidb.json"  # pytest-kbuild kcidb's output in the results dir by default
ID_DIGITS = 16  # hex digits of sha256 after the origin: 64 bits
MAX_EXCERPT = 16384  # KCIDB's maxLength of a log_excerpt
_SHA1 = re.compile(r"[0-9a-f]{40}")  # KCIDB's git_commit_hash
_ARCH = re.compile(r"[^a-z0-9_]")  # what KCIDB's architecture cannot hold
_HTTPS_REMOTE = re.compile(r"https://(?:[^/@]*@)?([^\s\0]+)")  # without user and password
_INTERRUPTED = (Status.INTERRUPTED.value, RUNNING)
ACCEPTED_DIR = (
    f"a results dir with the {SUMMARY} (schema {SUMMARY_SCHEMA}) that a run or "
    "pytest-kbuild merge of this version wrote"
)


@dataclass(frozen=True)
class Destination:
    """Where a run's document goes and how its ids and URLs are made."""

    path: Path
    origin: str
    base_url: str | None = None


def object_id(origin: str, *parts: str) -> str:
    """``<origin>:<hash of parts>``: the same parts, the same id."""
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return f"{origin}:{digest[:ID_DIGITS]}"


def read_summary(results_dir: Path) -> dict[str, Any]:
    """*results_dir*'s results.json; a KcidbError when there is none, or
    it is not of this version's schema."""
    path = Path(results_dir) / SUMMARY
    if not Path(results_dir).is_dir():
        raise KcidbError("", str(results_dir), "is not a directory", ACCEPTED_DIR)
    if not path.is_file():
        raise KcidbError("", str(path), "does not exist", ACCEPTED_DIR)
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise KcidbError("", str(path), f"cannot be read as JSON ({err})", ACCEPTED_DIR) from None
    if not isinstance(data, dict) or not isinstance(data.get("builds"), dict):
        raise KcidbError("", str(path), "has no builds object", ACCEPTED_DIR)
    if data.get("schema") != SUMMARY_SCHEMA:
        raise KcidbError("", str(path), f"has schema {data.get('schema')!r}", ACCEPTED_DIR)
    return data


def _metadata(folder: Path) -> dict[str, Any]:
    """The build's metadata.json ({} when it has none: results.json still
    tells its targets); one of another schema is a KcidbError."""
    path = folder / METADATA
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise KcidbError("", str(path), f"cannot be read as JSON ({err})", ACCEPTED_DIR) from None
    if not isinstance(data, dict) or data.get("schema") != METADATA_SCHEMA:
        schema = data.get("schema") if isinstance(data, dict) else None
        accepted = f"a {METADATA} of schema {METADATA_SCHEMA}"
        raise KcidbError("", str(path), f"has schema {schema!r}", accepted)
    return data


def _kind(target: str) -> str:
    """The kind of a target by its name; a target no data file defines
    (a plugin's, gone since) is a step of the build."""
    try:
        return Target.load(target).kind
    except KbuildError:
        return "commands"


def _compact(d: Mapping[str, Any]) -> dict[str, Any]:
    """*d* without None and empty values: KCIDB has no nulls."""
    return {k: v for k, v in d.items() if v is not None and v != [] and v != {} and v != ""}


def _excerpt(lines: Sequence[Any]) -> str | None:
    text = "\n".join(str(x) for x in lines if x)
    return text[:MAX_EXCERPT] or None


@dataclass(frozen=True)
class _Build:
    """One build as the document needs it: where it is and what it said."""

    build_id: str
    matrix: str
    entry: Mapping[str, Any]  # results.json's
    meta: Mapping[str, Any]  # metadata.json's ({} without one)
    folder: Path
    revision: str  # the tree's commit (+dirty), or what stands for it

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.revision, Path(self.matrix).stem, self.build_id)

    @property
    def where(self) -> str:
        """Where its statuses were read, for a message."""
        return str(self.folder / METADATA) if self.meta else f"{SUMMARY} builds.{self.build_id}"

    def target(self, name: str) -> Mapping[str, Any]:
        """metadata.json's entry of target *name* ({} without one)."""
        return (self.meta.get("targets") or {}).get(name) or {}


class _Writer:
    """Makes the objects of one document: ids from *origin*, URLs under
    *base_url* for the files of *results_dir*."""

    def __init__(self, results_dir: Path, origin: str, base_url: str | None) -> None:
        self.results_dir = Path(results_dir)
        self.origin = origin
        self.base_url = base_url.rstrip("/") if base_url else None

    def url(self, path: Path) -> str | None:
        """*path*'s URL (under the base URL), None without a base URL or a file."""
        if self.base_url is None or not path.is_file():
            return None
        relative = path.relative_to(self.results_dir).as_posix()
        return f"{self.base_url}/{quote(relative)}"

    def files(self, folder: Path, names: Sequence[str]) -> list[dict[str, str]]:
        """The KCIDB resources of the files *names* of *folder* that exist."""
        out = []
        for name in dict.fromkeys(names):
            url = self.url(folder / name)
            if url is not None:
                out.append({"name": name, "url": url})
        return out

    def checkout(self, b: _Build) -> dict[str, Any]:
        git = (b.meta.get("tree") or {}).get("git") or {}
        commit = str(git.get("commit") or "")
        remote = _HTTPS_REMOTE.fullmatch(str(git.get("remote_url") or ""))
        kernelversion = (b.meta.get("tree") or {}).get("kernelversion")
        return _compact(
            {
                "id": object_id(self.origin, b.revision),
                "origin": self.origin,
                "git_commit_hash": commit if _SHA1.fullmatch(commit) else None,
                "git_commit_name": git.get("describe"),
                "git_repository_branch": git.get("branch"),
                "git_repository_url": f"https://{remote.group(1)}" if remote else None,
                "comment": f"Linux {kernelversion}" if kernelversion else None,
                "valid": True,  # the builds ran from it
                "misc": _compact({"kernelversion": kernelversion, "revision": b.revision}),
            }
        )

    def build(self, b: _Build, checkout_id: str) -> dict[str, Any]:
        steps = {n: t for n, t in b.entry["targets"].items() if _kind(n) not in table().tests}
        ours = {n: grid.status(t) for n, t in steps.items()}
        statuses = [kcidb_status(s, b.where) for s in ours.values()]
        if b.meta.get("status") == RUNNING:
            statuses.append(kcidb_status(RUNNING, b.where))
        toolchain = b.meta.get("toolchain") or {}
        artifacts = [
            str(name)
            for name, a in (b.meta.get("artifacts") or {}).items()
            if str((a or {}).get("target")) in steps
        ]
        errors = [e for n in steps for e in b.target(n).get("errors") or ()]
        return _compact(
            {
                "id": object_id(self.origin, *b.key),
                "origin": self.origin,
                "checkout_id": checkout_id,
                "status": highest(statuses),
                "architecture": _ARCH.sub("_", str(b.meta.get("arch") or b.entry.get("arch"))),
                "compiler": toolchain.get("version") or b.entry.get("toolchain"),
                "config_name": _config_name(b),
                "config_url": self.url(b.folder / "config") or _kconfig_url(b),
                "input_files": _kconfig_urls(b),
                "start_time": b.meta.get("started"),
                "duration": round(sum(float(t.get("duration") or 0) for t in steps.values()), 3),
                "command": b.meta.get("reproducer"),
                "comment": f"{b.build_id} ({Path(b.matrix).name})",
                "log_url": self.url(b.folder / BUILD_LOG),
                "log_excerpt": _excerpt(errors),
                "output_files": self.files(b.folder, [*artifacts, METADATA, REPRODUCER]),
                "misc": _compact(
                    {
                        "build_id": b.build_id,
                        "matrix": Path(b.matrix).name,  # not where it was on the machine
                        "toolchain": toolchain.get("name") or b.entry.get("toolchain"),
                        "kconfig_sources": b.meta.get("kconfig_sources"),
                        "kernelrelease": b.meta.get("kernelrelease"),
                        "targets": ours,
                        "totals": b.meta.get("totals"),
                        "skip_reason": b.meta.get("skip_reason"),
                        "pytest_kbuild_version": b.meta.get("pytest_kbuild_version"),
                    }
                ),
            }
        )

    def tests(self, b: _Build, build_id: str) -> Iterator[dict[str, Any]]:
        """The tests of build *b*: one per target of a test kind, then its cases."""
        results = b.entry["targets"]
        names = list(results)
        if b.meta.get("status") in _INTERRUPTED:
            names += [n for n in b.meta.get("targets_requested") or () if n not in results]
        for name in names:
            path = table().tests.get(_kind(name))
            if path is None:
                continue
            ours = grid.status(results[name]) if name in results else NOT_RUN
            yield self.test(b, build_id, name, path, kcidb_status(ours, b.where), ours)
            for case in b.target(name).get("cases") or ():
                yield self.case(b, build_id, name, path, case)

    def test(
        self, b: _Build, build_id: str, name: str, path: str, status: str, ours: str
    ) -> dict[str, Any]:
        t = b.target(name)
        facts = t.get("boot") or {}
        log = b.folder / str(facts.get("console") or BUILD_LOG)
        environment = _compact(
            {
                "comment": f"QEMU {facts['machine']}" if facts.get("machine") else None,
                "misc": _compact({k: facts.get(k) for k in ("qemu", "machine", "firmware")}),
            }
        )
        return _compact(
            {
                "id": object_id(self.origin, *b.key, name),
                "origin": self.origin,
                "build_id": build_id,
                "path": path,
                "status": status,
                "duration": t.get("duration", b.entry["targets"].get(name, {}).get("duration")),
                "comment": t.get("reason") or None,
                "log_url": self.url(log),
                "log_excerpt": _excerpt(t.get("errors") or ()),
                "output_files": self.files(
                    b.folder, [str(a) for a in t.get("artifacts") or () if a != log.name]
                ),
                "environment": environment,
                "misc": _compact({"target": name, "status": ours, "infra": t.get("infra")}),
            }
        )

    def case(
        self, b: _Build, build_id: str, name: str, path: str, case: Mapping[str, Any]
    ) -> dict[str, Any]:
        facts = b.target(name).get("boot") or {}
        suite, case_name = str(case.get("suite") or ""), str(case.get("name") or "")
        parts = [path, *([path_part(suite)] if suite else []), path_part(case_name)]
        ours = cases.status(case)
        return _compact(
            {
                "id": object_id(self.origin, *b.key, name, cases.case_id(case)),
                "origin": self.origin,
                "build_id": build_id,
                "path": ".".join(parts),
                "status": kcidb_status(ours, b.where),
                "comment": str(case.get("reason") or "") or None,
                "log_url": self.url(b.folder / str(facts.get("console") or BUILD_LOG)),
                "log_excerpt": _excerpt(case.get("diagnostics") or ()),
                "misc": _compact({"target": name, "suite": suite, "case": case_name}),
            }
        )


def _revision(meta: Mapping[str, Any]) -> str:
    """What the ids say the tree was: its commit, ``+dirty`` when git
    describe says the tree had changes; without git, its kernelversion."""
    tree = meta.get("tree") or {}
    git = tree.get("git") or {}
    if git.get("commit"):
        dirty = str(git.get("describe") or "").endswith("-dirty")
        return str(git["commit"]) + ("+dirty" if dirty else "")
    return f"no git: Linux {tree.get('kernelversion') or 'unknown'}"


def _config_name(b: _Build) -> str:
    """``defconfig``, or ``defconfig+kasan.config+CONFIG_X=y``: the kconfig
    and each fragment (a file or URL by its name)."""
    kconfig = str(b.meta.get("kconfig") or b.entry.get("kconfig") or "")
    fragments = [str(f).rstrip("/").rsplit("/", 1)[-1] for f in b.meta.get("kconfig_add") or ()]
    return "+".join([kconfig, *fragments])


def _kconfig_urls(b: _Build) -> list[dict[str, str]]:
    """The kconfig and fragments fetched from URLs, as KCIDB input files."""
    out = []
    for source in b.meta.get("kconfig_sources") or ():
        if source.get("kind") != "url":
            continue
        url = str(source.get("final_url") or source.get("kconfig") or source.get("fragment"))
        name = url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "config"
        out.append({"name": name, "url": url})
    return out


def _kconfig_url(b: _Build) -> str | None:
    """The base kconfig's URL when it was fetched from one."""
    for source in b.meta.get("kconfig_sources") or ():
        if source.get("kind") == "url" and "kconfig" in source:
            return str(source.get("final_url") or source["kconfig"])
    return None


def document(
    results_dir: Path, summary: Mapping[str, Any], origin: str, base_url: str | None = None
) -> dict[str, Any]:
    """The KCIDB document of the builds of *summary* (results.json's), whose
    folders are in *results_dir*."""
    writer = _Writer(results_dir, origin, base_url)
    checkouts: dict[str, dict[str, Any]] = {}
    builds: list[dict[str, Any]] = []
    tests: list[dict[str, Any]] = []
    for key, entry in sorted(summary["builds"].items()):
        build_id, matrix = build_id_of(key, entry), str(entry.get("matrix") or "")
        folder = Scope(matrix, build_id).folder(writer.results_dir)
        meta = _metadata(folder)
        b = _Build(build_id, matrix, entry, meta, folder, _revision(meta))
        checkout = writer.checkout(b)
        checkouts.setdefault(checkout["id"], checkout)
        build = writer.build(b, checkout["id"])
        builds.append(build)
        tests.extend(writer.tests(b, build["id"]))
    return {
        "version": dict(VERSION),
        "checkouts": [checkouts[k] for k in sorted(checkouts)],
        "builds": builds,
        "tests": tests,
    }


def write(dest: Destination, results_dir: Path, summary: Mapping[str, Any]) -> dict[str, Any]:
    """Write the document of *summary*'s builds to *dest* and return it."""
    doc = document(results_dir, summary, dest.origin, dest.base_url)
    write_json(Path(dest.path), doc)
    return doc
