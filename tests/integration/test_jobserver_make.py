"""What GNU make (4.3 and later) does as a client of our jobserver FIFO.

These are the experiments behind pytest_kbuild/jobserver.py, kept as tests:
each job of a small Makefile logs its start and end, and the log tells how
many jobs ran at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from benchmarks.measure import max_running
from pytest_kbuild.run import jobserver as js
from tests.support import ctrl_c_reaches_child, require_tools

MAKEFILE = """\
JOBS := $(addprefix job,1 2 3 4 5 6)
all: $(JOBS)
$(JOBS):
\t@echo "S $$(date +%s.%N)" >> $(LOG); sleep $(T); echo "E $$(date +%s.%N)" >> $(LOG)
recursive:
\t+@$(MAKE) -f $(firstword $(MAKEFILE_LIST)) all
tools:
\t@$(MAKE) MAKEFLAGS="s $(filter --j% -j,$(MAKEFLAGS))" -f $(firstword $(MAKEFILE_LIST)) all
.PHONY: all recursive tools $(JOBS)
"""


@pytest.fixture
def make_dir(tmp_path):
    require_tools("make")
    (tmp_path / "Makefile").write_text(MAKEFILE)
    (tmp_path / "log").write_text("")
    return tmp_path


def start(make_dir, server, *args, sleep="0.3"):
    argv = ["make", "-s", f"LOG={make_dir / 'log'}", f"T={sleep}", *args]
    return subprocess.Popen(
        js.wrap(argv, server.path),
        cwd=make_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=ctrl_c_reaches_child,
    )


# tools: the shape of the kernel's tools/ sub-makes (objtool, perf, cpupower,
# the selftests), which keep only MAKEFLAGS' --j% and -j words. With a bare
# -j among them that sub-make ran all six jobs at once ("-j0 forced in
# makefile: resetting jobserver mode"); it must stay within the tokens and
# not fall back to one job at a time either.
@pytest.mark.parametrize("goal", ["all", "recursive", "tools"])
def test_make_runs_tokens_plus_its_implicit_job(make_dir, goal):
    server = js.Jobserver(2)
    try:
        proc = start(make_dir, server, goal)
        out = proc.communicate(timeout=30)[0].decode()
        assert proc.returncode == 0 and out == ""  # no jobserver warning
        assert max_running(make_dir / "log") == 3
        assert server.available() == 2  # every token came back
    finally:
        server.close()


def test_a_jobs_option_on_the_command_line_would_ignore_the_jobserver(make_dir):
    # Why make_command() gives no --jobs=N when a jobserver is on.
    server = js.Jobserver(1)
    try:
        proc = start(make_dir, server, "-j4")
        out = proc.communicate(timeout=30)[0].decode()
        assert "-j4 forced in submake: resetting jobserver mode" in out
        assert max_running(make_dir / "log") == 4
    finally:
        server.close()


@pytest.mark.parametrize(
    ("sig", "tokens_after"), [(signal.SIGTERM, 3), (signal.SIGINT, 3), (signal.SIGKILL, 0)]
)
def test_stopped_make_returns_its_tokens_unless_killed(make_dir, sig, tokens_after):
    # The runtime stops a build with SIGTERM first: its tokens come back.
    # SIGKILL loses those make held, for the rest of the run.
    server = js.Jobserver(3)
    try:
        proc = start(make_dir, server, sleep="5")
        deadline = time.monotonic() + 10
        while max_running(make_dir / "log") < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, sig)
        proc.communicate(timeout=30)
        time.sleep(0.1)
        assert server.available() == tokens_after
    finally:
        server.close()
