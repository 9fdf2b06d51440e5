"""The README's main job on a fresh Debian 12 (issue 10: it failed there for
want of rsync, which no machine with a hand-installed rsync could show).

How the fresh machine is made and the job run: tests/fresh_machine.py (the
session fixture ``fresh_machine``, which test_kernel_real.py reads too).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from tests.fresh_machine import BUILD_ID, TIMEOUT
from tests.support import builds_by_id

TARGETS = ["config", "kernel", "debugkernel", "modules", "dtbs", "headers"]


def test_readme_main_job_passes_on_a_fresh_debian_12(fresh_machine):
    run = fresh_machine
    text = run.log.read_text()
    where = run.where()
    assert run.total < TIMEOUT, f"killed after {TIMEOUT} s: {where}"
    assert "fresh: no rsync" in text and "fresh: no python3" in text, where
    installing = next((ln for ln in text.splitlines() if ln.startswith("setup: installing")), "")
    assert " rsync " in f"{installing} ", where  # .ci/setup, not the image, brought it
    assert run.returncode == 0, where

    results = run.results
    suite = ET.parse(results / "junit.xml").getroot().find("testsuite")
    assert suite is not None, where
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "0")
    assert suite.get("tests") == str(len(TARGETS)), where
    summary = json.loads((results / "results.json").read_text())
    assert list(builds_by_id(summary)) == [BUILD_ID]
    outcomes = {t: v["outcome"] for t, v in builds_by_id(summary)[BUILD_ID]["targets"].items()}
    assert outcomes == dict.fromkeys(TARGETS, "passed"), where
    for artifact in ("Image.gz", "vmlinux.xz", "modules.tar.xz", "dtbs.tar.xz", "headers.tar.xz"):
        assert (results / "smoke" / BUILD_ID / artifact).stat().st_size > 0, artifact
