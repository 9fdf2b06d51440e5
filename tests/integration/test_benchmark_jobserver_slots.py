"""benchmarks/jobserver_slots.py on a tiny workload."""

from __future__ import annotations

import os
import re

from benchmarks import jobserver_slots


def test_tiny_run_prints_every_policy(capsys):
    jobserver_slots.main(["--runs", "1", "--jobs", "4", "2", "--work", "1000"])
    lines = capsys.readouterr().out.splitlines()
    assert re.match(r"machine: \d+ cores; 2 builds at once of \[4, 2\] jobs", lines[0])
    assert len(lines) == 6
    held = lines[-1]
    assert "(pytest-kbuild)" in held
    # With a token for each first job, never more jobs than cores at once.
    assert int(held.rsplit(maxsplit=1)[1]) <= (os.cpu_count() or 1)
