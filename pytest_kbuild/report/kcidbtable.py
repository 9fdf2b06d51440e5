"""The table of data/report/kcidb.yaml, which report/kcidb.py writes the
KCIDB document by: each pytest-kbuild status as KCIDB's, KCIDB's priority
order (a build's status is the highest of its build targets'), and the
test path of each target kind that is a test of the build; with the test
path grammar. No pytest import.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import yaml

from ..definitions import DATA_DIR
from ..errors import DefinitionError, KcidbError

TABLE_FILE = DATA_DIR / "report" / "kcidb.yaml"
NOT_RUN = "not run"  # a test target an interrupted build never reached (the table's key)
RUNNING = "running"  # metadata.json's status of a build that never recorded its end
_PATH_PART = re.compile(r"[^A-Za-z0-9_-]")  # what a part of a KCIDB test path cannot hold


@dataclass(frozen=True)
class Table:
    """data/report/kcidb.yaml: our status -> KCIDB's, KCIDB's priority
    order, and the test path of each target kind that is a test."""

    status: Mapping[str, str]
    priority: tuple[str, ...]
    tests: Mapping[str, str]


@functools.cache
def table() -> Table:
    """The table of data/report/kcidb.yaml, checked."""
    where = str(TABLE_FILE)
    try:
        d = yaml.safe_load(TABLE_FILE.read_text())
    except yaml.YAMLError as err:
        raise DefinitionError(where, f"invalid YAML: {err}") from None
    if not isinstance(d, dict) or not all(
        isinstance(d.get(k), t) for k, t in (("status", dict), ("priority", list), ("tests", dict))
    ):
        raise DefinitionError(where, "needs a status map, a priority list and a tests map")
    status = {str(k): str(v) for k, v in d["status"].items()}
    priority = tuple(str(s) for s in d["priority"])
    bad = sorted(set(status.values()) - set(priority))
    if bad:
        raise DefinitionError(where, f"status {bad[0]!r} is not in priority: {priority}")
    tests = {str(k): str(v) for k, v in d["tests"].items()}
    for kind, path in tests.items():
        if not all(p and not _PATH_PART.search(p) for p in path.split(".")):
            raise DefinitionError(where, f"tests.{kind}: {path!r} is not a KCIDB test path")
    return Table(status, priority, tests)


def kcidb_status(ours: str, where: str) -> str:
    """KCIDB's status of one of ours; a status the table lacks (of a newer
    version's results) is a KcidbError naming *where* it was read."""
    known = table().status
    if ours not in known:
        raise KcidbError(where, ours, "has no KCIDB status", ", ".join(known))
    return known[ours]


def highest(statuses: Sequence[str]) -> str:
    """The highest of KCIDB *statuses* in KCIDB's priority; SKIP for none."""
    order = table().priority
    return min(statuses, key=order.index, default="SKIP")


def path_part(text: str) -> str:
    """*text* as one part of a KCIDB test path (letters, digits, _ and -)."""
    return _PATH_PART.sub("_", text) or "_"
