"""``pytest-kbuild merge OUT DIR...``: the results directories of several
shards as one: every build folder, one results.json, one junit.xml.

No pytest import. Everything is read and checked before anything is
written, so a merge that fails leaves OUT as it was.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MergeError
from ..results import SUMMARY, totals, write_json
from ..results import SUMMARY_SCHEMA as SCHEMA
from . import cases as ran_cases
from . import grouping

JUNIT = "junit.xml"
# JUnit count attribute -> the child element that marks a testcase as such.
_COUNTED = (("failures", "failure"), ("errors", "error"), ("skipped", "skipped"))
_ONE_SHARD = "each build must come from exactly one shard"


@dataclass(frozen=True)
class Merged:
    """What merge() wrote."""

    out: Path
    builds: int  # build folders copied
    testcases: int  # testcases in OUT/junit.xml (0: none written)


def merge(out: Path, dirs: Sequence[Path]) -> Merged:
    """Merge the results directories *dirs* of several shards into *out*."""
    out = Path(out)
    dirs = [Path(d) for d in dirs]
    for d in dirs:
        if not d.is_dir():
            raise MergeError(str(d), "is not a directory")
        if d.resolve() == out.resolve():
            raise MergeError(str(d), "is also OUT; merge into another directory")
    folders = _build_folders(dirs)
    for rel in folders:
        if (out / rel).exists():
            raise MergeError(str(out / rel), "already exists; merge into a new directory")
    summary = _summary(dirs, out.resolve())
    junit = _junit(dirs)
    if out.exists() and not out.is_dir():
        raise MergeError(str(out), "is a file; OUT is a directory, new or without these builds")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise MergeError(str(out), f"cannot be made: {err.strerror or err}") from None
    try:
        for rel, src in folders.items():
            shutil.copytree(src / rel, out / rel, symlinks=True)
        if summary is not None:
            write_json(out / SUMMARY, summary)
        if folders:
            grouping.write(out, grouping.summarise(out))
        cases = 0
        if junit is not None:
            ET.ElementTree(junit).write(out / JUNIT, encoding="utf-8", xml_declaration=True)
            cases = int(junit.get("tests", "0"))
    except OSError as err:  # shutil.Error too
        # A full disk half way: say that OUT is incomplete, not a traceback.
        raise MergeError(
            str(out), f"could not be written ({_why(err)}); it is incomplete"
        ) from None
    return Merged(out, len(folders), cases)


def _why(err: OSError) -> str:
    """What went wrong, short: copytree's shutil.Error lists every file."""
    if isinstance(err, shutil.Error) and err.args and isinstance(err.args[0], list):
        failed = err.args[0]
        _, dst, why = failed[0]
        return f"{len(failed)} files not copied, the first {dst}: {str(why).split(': ')[0]}"
    return err.strerror or str(err)


def _build_folders(dirs: Iterable[Path]) -> dict[Path, Path]:
    """``<matrix stem>/<build id>`` -> the results dir holding it."""
    found: dict[Path, Path] = {}
    for d in dirs:
        for matrix_dir in sorted(p for p in d.iterdir() if _visible_dir(p)):
            for build in sorted(p for p in matrix_dir.iterdir() if _visible_dir(p)):
                rel = build.relative_to(d)
                if rel in found:
                    raise MergeError(
                        f"build folder {str(rel)!r}",
                        f"is in both {str(found[rel])!r} and {str(d)!r}; {_ONE_SHARD}",
                    )
                found[rel] = d
    return found


def _visible_dir(path: Path) -> bool:
    return path.is_dir() and not path.name.startswith(".")


def _summary(dirs: Iterable[Path], out: Path) -> dict[str, Any] | None:
    """One results.json from those of *dirs* (a shard without builds has none)."""
    builds: dict[str, Any] = {}
    origin: dict[str, Path] = {}
    matrices: list[str] = []
    found = False
    for d in dirs:
        path = d / SUMMARY
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise MergeError(str(path), f"cannot be read as JSON: {err}") from None
        if not isinstance(data, dict) or not isinstance(data.get("builds"), dict):
            raise MergeError(str(path), "is not a results.json: no builds object")
        if data.get("schema") != SCHEMA:
            raise MergeError(str(path), f"has schema {data.get('schema')!r}; accepted: {SCHEMA}")
        found = True
        matrices += [m for m in data.get("matrices", []) if m not in matrices]
        for build_id, build in data["builds"].items():
            if build_id in origin:
                raise MergeError(
                    f"build {build_id!r} in {SUMMARY}",
                    f"is in both {str(origin[build_id])!r} and {str(d)!r}; {_ONE_SHARD}",
                )
            targets = build.get("targets") if isinstance(build, dict) else None
            if not isinstance(targets, dict) or not all(
                isinstance(t, dict) and "outcome" in t for t in targets.values()
            ):
                raise MergeError(str(path), f"builds.{build_id} has no targets with outcomes")
            origin[build_id] = d
            builds[build_id] = _rebased(build, data.get("results_dir"), out)
    if not found:
        return None
    merged = {
        "schema": SCHEMA,
        "matrices": matrices,
        "results_dir": str(out),
        "totals": totals(builds),
        "builds": dict(sorted(builds.items())),
    }
    case_totals = ran_cases.totals(builds)  # as plugin/reporting.py writes them
    if case_totals:
        merged["case_totals"] = case_totals
    return merged


def _rebased(build: dict[str, Any], old: Any, new: Path) -> dict[str, Any]:
    """*build* with its log paths moved from the shard's results dir *old* to *new*."""
    if not isinstance(old, str):
        return build
    targets = {}
    for name, entry in build["targets"].items():
        log = entry.get("log")
        if isinstance(log, str) and Path(log).is_relative_to(old):
            entry = {**entry, "log": str(new / Path(log).relative_to(old))}
        targets[name] = entry
    return {**build, "targets": targets}


def _junit(dirs: Iterable[Path]) -> ET.Element | None:
    """One <testsuites> holding the test suites of every DIR/*.xml, with
    counts recomputed from the testcases."""
    suites: list[ET.Element] = []
    for d in dirs:
        for path in sorted(d.glob("*.xml")):
            try:
                root = ET.parse(path).getroot()
            except (OSError, ET.ParseError) as err:
                raise MergeError(str(path), f"cannot be read as XML: {err}") from None
            if root.tag == "testsuite":
                suites.append(root)
            elif root.tag == "testsuites":
                suites += root.findall("testsuite")
            else:
                raise MergeError(
                    str(path),
                    f"root element is <{root.tag}>; accepted: <testsuites> or <testsuite>",
                )
    if not suites:
        return None
    top = ET.Element("testsuites", {"name": "pytest-kbuild merge"})
    time = 0.0
    for suite in suites:
        _count(suite, suite.iter("testcase"))
        time += _float(suite.get("time"))
        top.append(suite)
    _count(top, top.iter("testcase"))
    top.set("time", f"{time:.3f}")
    return top


def _count(element: ET.Element, cases: Iterable[ET.Element]) -> None:
    counts = dict.fromkeys(["tests", *(attr for attr, _ in _COUNTED)], 0)
    for case in cases:
        counts["tests"] += 1
        for attr, child in _COUNTED:
            counts[attr] += int(case.find(child) is not None)
    for attr, n in counts.items():
        element.set(attr, str(n))


def _float(value: str | None) -> float:
    try:
        return float(value or 0)
    except ValueError:
        return 0.0
