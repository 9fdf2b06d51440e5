"""What pytest's --junitxml writes for build items, as CI systems show it:
a classname Jenkins splits into matrix (package) and build (class), and a
``<system-out>`` with the target's diagnostics and ``[[ATTACHMENT|path]]``
lines for its build.log, config and metadata.json.

The XML stays pytest's: this plugin only sets the classname attribute and
appends one element through junitxml's node reporter, on the process that
writes the file (the xdist controller; the text travels in the report).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from ..diagnostics.baseline import marked

# The report attribute that carries the <system-out> text from the process
# that ran the item (an xdist worker serialises report.__dict__).
REPORT_ATTR = "kbuild_system_out"
SYSTEM_OUT_DIAGNOSTICS = 20  # diagnostics listed; the rest are in build.log
SYSTEM_OUT_LINES = 3  # printed lines shown per diagnostic
_MATRIX_SUFFIX = re.compile(r"\.ya?ml$")


def classname(nodeid: str, location: str | None = None) -> str | None:
    """``<matrix>.<build id>`` for a build item's *nodeid*, so that Jenkins
    (which splits at the last dot) shows the matrix as package and the build
    as class: no leading dots for a matrix outside the rootdir (its node id
    is ``::<build>::<target>`` or ``../m.yaml::...``, its *location* the
    report's ``../m.yaml``), and dots inside a name (``ci.defconfig``,
    ``v1.2``) as ``_``. A case a target ran (``matrix::build::target::case``,
    plugin/cases.py) has its build's classname too. None for other node ids."""
    parts = nodeid.split("::")
    if len(parts) not in (3, 4):
        return None
    path, build_id = parts[0], parts[1]
    path = path or location or ""
    dirs = [p for p in path.split("/") if p not in ("", ".", "..")]
    if dirs:
        dirs[-1] = _MATRIX_SUFFIX.sub("", dirs[-1])
    package = [d.replace(".", "_") for d in dirs if d]
    return ".".join([*package, build_id.replace(".", "_")])


def system_out(
    diagnostics: Iterable[Mapping[str, Any]], attachments: Iterable[Path], root: Path
) -> str:
    """The text of a testcase's ``<system-out>``: the first diagnostics (a
    few printed lines each), then one ``[[ATTACHMENT|path]]`` line per file
    that exists, *path* relative to *root* (GitLab resolves it against the
    project directory, Jenkins' junit-attachments against the workspace)."""
    lines: list[str] = []
    diags = list(diagnostics)
    for d in diags[:SYSTEM_OUT_DIAGNOSTICS]:
        printed = d.get("raw") or []  # the printed lines (a list; a string is one)
        raw = printed.splitlines() if isinstance(printed, str) else [str(x) for x in printed]
        if not raw:
            where = ":".join(str(d[k]) for k in ("file", "line") if d.get(k) is not None)
            raw = [f"{where}: {d.get('kind', '')}: {d.get('message', '')}".lstrip(": ")]
        raw = raw[:SYSTEM_OUT_LINES]
        if "new" in d:  # compared with a baseline: ">>" marks what is new
            raw = [marked(raw[0], bool(d["new"])), *(f"   {r}" for r in raw[1:])]
        lines += raw
    if len(diags) > SYSTEM_OUT_DIAGNOSTICS:
        lines.append(f"... {len(diags) - SYSTEM_OUT_DIAGNOSTICS} more diagnostics in build.log")
    for path in attachments:
        if path.is_file():
            lines.append(f"[[ATTACHMENT|{Path(os.path.relpath(path, root)).as_posix()}]]")
    return "\n".join(lines) + "\n" if lines else ""


def strict_xunit2(config: pytest.Config) -> bool:
    """Whether the XML follows the xUnit 2 schema that Jenkins' xUnit plugin
    validates (junit_family=xunit2, pytest's default), which has no
    properties in a testcase; with xunit1 or legacy, testcases keep theirs
    (Jenkins' junit plugin shows them with keepProperties)."""
    return bool(config.getini("junit_family") == "xunit2")


def drop_testcase_properties(path: Path) -> None:
    """Rewrite the JUnit file at *path* without ``<properties>`` in testcases."""
    tree = ET.parse(path)
    for case in tree.getroot().iter("testcase"):
        for props in case.findall("properties"):
            case.remove(props)
    tmp = path.with_name(f".{path.name}.kbuild")
    tree.write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, path)


class JunitHooks:
    """Registered when a matrix is given; acts only with --junitxml."""

    def __init__(self, config: pytest.Config, matrices: Iterable[Path], results: Path) -> None:
        self.config = config
        self.matrices = tuple(matrices)
        self.results = results

    @pytest.hookimpl(hookwrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Iterator[None]:
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:  # the testsuite's properties, in every family
            xml.add_global_property("kbuild_version", metadata.version("pytest-kbuild"))
            xml.add_global_property("kbuild_matrices", " ".join(map(str, self.matrices)))
            xml.add_global_property("kbuild_results", str(self.results))
        yield  # junitxml writes the file
        if xml is not None and strict_xunit2(self.config) and Path(xml.logfile).is_file():
            drop_testcase_properties(Path(xml.logfile))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Iterator[None]:
        outcome: Any = yield
        report = outcome.get_result()
        text = getattr(item, "junit_system_out", None)
        # On the teardown report: the testcase's last, so that the element
        # follows <failure>/<skipped> (the schema's order), and set whether
        # the item ran or errored in setup.
        if text and call.when == "teardown":
            setattr(report, REPORT_ATTR, text)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # tryfirst: before junitxml opens the testcase for this report, whose
        # record_testreport keeps attributes set earlier on its reporter.
        # junitxml keeps its LogXML under this key only (on the process
        # that writes the file); there is no public accessor.
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is None:
            return
        name = classname(report.nodeid, report.location[0] if report.location else None)
        if name is None:
            return
        reporter = xml.node_reporter(report)
        reporter.add_attribute("classname", name)
        text = getattr(report, REPORT_ATTR, None)
        if text:
            element = ET.Element("system-out")
            element.text = text
            reporter.append(element)
