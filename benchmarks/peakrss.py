"""A pytest plugin for benchmarks/large_matrix.py (loaded with ``-p peakrss``):
at the end of the run, the controller (not an xdist worker) writes its peak
RSS in KiB to the file $KBUILD_BENCH_RSS_FILE names."""

from __future__ import annotations

import os
import resource
from pathlib import Path
from typing import Any


def pytest_unconfigure(config: Any) -> None:
    where = os.environ.get("KBUILD_BENCH_RSS_FILE")
    if where and not hasattr(config, "workerinput"):
        Path(where).write_text(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
