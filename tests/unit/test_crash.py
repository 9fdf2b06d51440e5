"""A build whose process died: what the controller cleans up (crash.py)."""

from __future__ import annotations

import json
import subprocess
import time

from pytest_kbuild.build import crash, workdirs
from pytest_kbuild.results import METADATA


def test_the_dead_builds_make_is_stopped_its_temp_dir_removed_and_the_crash_recorded(tmp_path):
    build_dir = workdirs.make_build_dir(None, "test-crash")  # a temporary one
    # A stand-in for make, in a session of its own, with the build's O= argument.
    make = subprocess.Popen(
        ["sh", "-c", "sleep 60 & wait", "make", f"O={build_dir}"], start_new_session=True
    )
    folder = tmp_path / "m" / "x86_64-gcc-defconfig"
    folder.mkdir(parents=True)
    config = {"status": "PASS", "reason": ""}
    meta = {"status": "running", "build_dir": str(build_dir), "targets": {"config": config}}
    (folder / METADATA).write_text(json.dumps(meta))
    try:
        deadline = time.monotonic() + 10
        while make.pid not in crash.process_groups_building_in(build_dir):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        done = crash.record(folder, "kernel", ["debugkernel"], "worker gw0 crashed")
        assert make.wait(timeout=10) is not None
    finally:
        if make.poll() is None:
            make.kill()
    assert done == f"1 process group of its make stopped; temporary build dir {build_dir} removed"
    assert not build_dir.parent.exists() and not crash.process_groups_building_in(build_dir)
    after = json.loads((folder / METADATA).read_text())
    assert (after["status"], after["error"]) == ("ERROR", "worker gw0 crashed")
    assert after["finished"]
    assert after["targets"]["config"] == config
    kernel = after["targets"]["kernel"]
    assert (kernel["status"], kernel["reason"], kernel["infra"]) == (
        "ERROR",
        "worker gw0 crashed",
        "worker-crashed",
    )
    assert after["targets"]["debugkernel"]["status"] == "SKIP"


def test_a_build_dir_of_the_users_own_is_kept(tmp_path):
    folder, kept = tmp_path / "out", tmp_path / "build"
    folder.mkdir()
    kept.mkdir()
    (folder / METADATA).write_text(json.dumps({"build_dir": str(kept), "targets": {}}))
    assert crash.record(folder, "kernel", [], "x") == "0 process groups of its make stopped"
    assert kept.is_dir()


def test_without_metadata_nothing_is_touched(tmp_path):
    assert crash.record(tmp_path, "kernel", [], "x") == "no metadata.json to find its build dir"
