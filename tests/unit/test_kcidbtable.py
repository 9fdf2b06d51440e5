"""report/kcidbtable.py: the status table of data/report/kcidb.yaml covers
every status the project has and maps it to one of KCIDB's (kcidb-io's
latest schema), in KCIDB's priority order; test paths are of kinds that exist."""

from __future__ import annotations

import re

import pytest
from kcidb_io.schema import LATEST

from pytest_kbuild.definitions import targets
from pytest_kbuild.errors import DefinitionError, KcidbError
from pytest_kbuild.report import cases, kcidbtable
from pytest_kbuild.results import Status


def test_the_status_table_covers_every_status_the_project_has():
    table = kcidbtable.table()
    ours = (
        {s.value for s in Status} | {kcidbtable.RUNNING, kcidbtable.NOT_RUN} | set(cases.STATUSES)
    )
    assert set(table.status) == ours
    kcidb_statuses = LATEST.json["$defs"]["status"]["enum"]
    assert list(table.priority) == kcidb_statuses  # KCIDB's own order, highest first
    assert set(table.status.values()) <= set(kcidb_statuses)
    assert set(table.tests) <= set(targets.KINDS)
    assert {"boot", "kunit", "kselftest"} <= set(table.tests)


def test_the_highest_status_is_kcidbs_summary():
    assert kcidbtable.highest(["PASS", "SKIP"]) == "PASS"
    assert kcidbtable.highest(["PASS", "MISS", "ERROR"]) == "ERROR"
    assert kcidbtable.highest(["ERROR", "FAIL"]) == "FAIL"
    assert kcidbtable.highest([]) == "SKIP"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("status: [", "invalid YAML"),
        ("status: {}\n", "needs a status map, a priority list and a tests map"),
        (
            "status: {PASS: GOOD}\npriority: [PASS]\ntests: {}\n",
            "status 'GOOD' is not in priority: ('PASS',)",
        ),
        (
            "status: {PASS: PASS}\npriority: [PASS]\ntests: {boot: 'boot..x'}\n",
            "tests.boot: 'boot..x' is not a KCIDB test path",
        ),
    ],
)
def test_a_broken_table_is_a_definition_error(tmp_path, monkeypatch, text, problem):
    bad = tmp_path / "kcidb.yaml"
    bad.write_text(text)
    monkeypatch.setattr(kcidbtable, "TABLE_FILE", bad)
    kcidbtable.table.cache_clear()
    try:
        with pytest.raises(DefinitionError, match=re.escape(f"{bad}: {problem}")):
            kcidbtable.table()
    finally:
        kcidbtable.table.cache_clear()


def test_a_status_the_table_lacks_is_named_with_where_it_was_read():
    with pytest.raises(
        KcidbError, match=r"^m/b/metadata.json: 'FLAKY' has no KCIDB status; accepted: PASS,"
    ):
        kcidbtable.kcidb_status("FLAKY", "m/b/metadata.json")


def test_a_path_part_holds_only_what_kcidb_paths_can():
    assert kcidbtable.path_part("example skip (1 of 2)") == "example_skip__1_of_2_"
    assert kcidbtable.path_part("a.b") == "a_b" and kcidbtable.path_part("") == "_"
    assert LATEST.test_path_re.match("kunit." + kcidbtable.path_part("ä ö.x"))
