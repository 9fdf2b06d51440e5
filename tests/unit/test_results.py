import hashlib
import json
import os
from pathlib import Path

import pytest

from pytest_kbuild.build.result import BuildResult
from pytest_kbuild.results import (
    BUILD_LOG,
    METADATA,
    SUMMARY,
    Artifact,
    Scope,
    Status,
    TargetResult,
    results_folder,
    scope_of,
    write_json,
)


def test_names():
    assert (METADATA, BUILD_LOG, SUMMARY) == ("metadata.json", "build.log", "results.json")


def test_status_values_are_their_names():
    for s in Status:
        assert s.value == s.name
        assert Status(s.value) is s
    assert json.dumps(Status.PASS) == '"PASS"'


def _build(*statuses):
    r = BuildResult("x86_64-gcc-defconfig", Path("/out"))
    for i, s in enumerate(statuses):
        r.targets[f"t{i}"] = TargetResult(f"t{i}", s)
    return r


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ((), Status.SKIP),
        ((Status.SKIP, Status.SKIP), Status.SKIP),
        ((Status.PASS, Status.SKIP), Status.PASS),
        ((Status.PASS, Status.FAIL, Status.SKIP), Status.FAIL),
        ((Status.FAIL, Status.ERROR), Status.ERROR),
        ((Status.ERROR, Status.INTERRUPTED, Status.FAIL), Status.INTERRUPTED),
        ((Status.PASS, Status.WARNING, Status.SKIP), Status.WARNING),
        ((Status.WARNING, Status.FAIL), Status.FAIL),
    ],
)
def test_build_status_is_the_worst(statuses, expected):
    assert _build(*statuses).status is expected


@pytest.mark.parametrize(
    ("statuses", "passed"),
    [
        ((Status.PASS, Status.SKIP), True),
        ((Status.SKIP,), True),
        ((Status.PASS, Status.FAIL), False),
        ((Status.ERROR,), False),
        ((Status.INTERRUPTED,), False),
        ((Status.PASS, Status.WARNING), True),  # passed with problems
    ],
)
def test_build_passed(statuses, passed):
    assert _build(*statuses).passed is passed


def test_build_getitem():
    r = _build(Status.PASS)
    assert r["t0"].status is Status.PASS
    with pytest.raises(KeyError):
        r["nope"]


def test_target_passed():
    assert TargetResult("k", Status.PASS).passed
    assert not TargetResult("k", Status.SKIP).passed
    # WARNING: passed with problems; dependents run (built), the build passes.
    warned = TargetResult("kselftest", Status.WARNING)
    assert warned.passed and warned.built
    assert not TargetResult("k", Status.FAIL).built


def test_artifact_of(tmp_path):
    f = tmp_path / "bzImage"
    data = os.urandom(3 << 20)  # more than one read chunk
    f.write_bytes(data)
    a = Artifact.of(f)
    assert a == Artifact("bzImage", str(f), len(data), hashlib.sha256(data).hexdigest())


def test_target_to_json(tmp_path):
    (tmp_path / "bzImage").write_bytes(b"img")
    t = TargetResult(
        "kernel",
        Status.FAIL,
        duration=1.23456,
        reason="make bzImage failed",
        errors=["a.c:1:1: error: x"],
        warnings=2,
        error_count=1,
        artifacts=[Artifact.of(tmp_path / "bzImage")],
        log_start=10,
        log_end=20,
        queued=7.0004,
    )
    d = t.to_json()
    assert d == {
        "name": "kernel",
        "status": "FAIL",
        "duration": 1.235,
        "reason": "make bzImage failed",
        "errors": ["a.c:1:1: error: x"],
        "warnings": 2,
        "error_count": 1,
        "artifacts": ["bzImage"],
        "log_start": 10,
        "cache": {},
        "log_end": 20,
        "diagnostics": [],
        "baseline": None,
        "failed_on": "",
        "infra": "",
        "retryable": False,
        "attempts": [],
        "boot": None,
        "cases": [],
        "queued": 7.0,
    }
    json.dumps(d)


def test_write_json(tmp_path):
    path = tmp_path / "out" / "sub" / METADATA
    write_json(path, {"status": Status.PASS, "path": Path("/x"), "n": 1})
    assert json.loads(path.read_text()) == {"status": "PASS", "path": "/x", "n": 1}
    assert path.read_text().endswith("}\n")
    write_json(path, {"status": "running"})
    assert json.loads(path.read_text()) == {"status": "running"}
    assert os.listdir(path.parent) == [METADATA]


def test_write_json_failure_keeps_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / METADATA
    write_json(path, {"ok": True})
    with pytest.raises(TypeError):
        write_json(path, {("tuple", "key"): 1})
    assert json.loads(path.read_text()) == {"ok": True}
    assert os.listdir(tmp_path) == [METADATA]


def test_write_json_mode_follows_umask(tmp_path):
    path = tmp_path / METADATA
    old = os.umask(0o022)
    try:
        write_json(path, {})
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_scope_is_its_matrix_and_build_id():
    scope = Scope.parse("matrices/smoke.yaml::x86_64-gcc-tinyconfig")
    assert scope == Scope("matrices/smoke.yaml", "x86_64-gcc-tinyconfig")
    assert str(scope) == "matrices/smoke.yaml::x86_64-gcc-tinyconfig"
    assert scope.item("kernel") == "matrices/smoke.yaml::x86_64-gcc-tinyconfig::kernel"
    assert Scope.of_item(scope.item("kernel")) == (scope, "kernel")
    assert Scope.parse("../m.yaml::b").matrix == "../m.yaml"  # a matrix outside the rootdir


def test_text_without_a_build_id_is_no_scope():
    with pytest.raises(ValueError, match=r"^'m.yaml' is not <matrix>::<build id>$"):
        Scope.parse("m.yaml")


def test_scope_of_any_node_id_is_all_before_its_last_separator():
    assert scope_of("m.yaml::b::kernel") == "m.yaml::b"
    assert scope_of("tests/test_x.py::test_a") == "tests/test_x.py"


def test_a_builds_folder_is_under_its_matrix_stem(tmp_path):
    assert results_folder(tmp_path, "matrices/smoke.yaml", "b") == tmp_path / "smoke" / "b"
    assert Scope("../m.yml", "b").folder(tmp_path) == tmp_path / "m" / "b"
