from pytest_kbuild.build import cachestats
from pytest_kbuild.definitions.toolchain import Wrapper

CCACHE = Wrapper.load("ccache")
SCCACHE = Wrapper.load("sccache")
NONE = Wrapper.load("none")

# Two compilations, as ccache appends them to its stats log (CCACHE_STATSLOG).
FIRST = """\
# /src/init/main.c
direct_cache_hit
local_storage_hit
local_storage_read_hit
"""
SECOND = """\
# /src/kernel/exit.c
cache_miss
local_storage_miss
remote_storage_error
"""
ZERO = {"hits": 0, "misses": 0, "local_hits": 0, "remote_hits": 0, "remote_errors": 0}


def test_log_path_is_the_one_the_build_environment_names(tmp_path):
    env = CCACHE.environment(str(tmp_path), None)
    assert cachestats.log_path(CCACHE, env) == tmp_path / "ccache-stats.log"


def test_no_log_path_for_a_wrapper_without_a_stats_log():
    assert cachestats.log_path(SCCACHE, {}) is None
    assert cachestats.log_path(NONE, {}) is None


def test_log_size(tmp_path):
    log = tmp_path / "ccache-stats.log"
    assert cachestats.log_size(None) == 0
    assert cachestats.log_size(log) == 0, "not written yet"
    log.write_text(FIRST)
    assert cachestats.log_size(log) == len(FIRST)


def test_counts_between_offsets(tmp_path):
    log = tmp_path / "ccache-stats.log"
    log.write_text(FIRST + SECOND)
    first = {**ZERO, "hits": 1, "local_hits": 1}
    second = {**ZERO, "misses": 1, "remote_errors": 1}
    assert cachestats.counts(CCACHE, log, 0, len(FIRST)) == first
    assert cachestats.counts(CCACHE, log, len(FIRST), None) == second
    assert cachestats.counts(CCACHE, log, 0, None) == {k: first[k] + second[k] for k in ZERO}


def test_counts_are_zero_before_the_log_exists(tmp_path):
    assert cachestats.counts(CCACHE, tmp_path / "ccache-stats.log", 0, None) == ZERO


def test_no_counts_without_a_log_or_counters(tmp_path):
    log = tmp_path / "stats.log"
    log.write_text(FIRST)
    assert cachestats.counts(CCACHE, None, 0, None) == {}
    assert cachestats.counts(SCCACHE, log, 0, None) == {}


def test_report_runs_the_wrappers_stats_command(fake_runtime, tmp_path):
    fake_runtime.capture_outputs["ccache --show-log-stats -v"] = (0, "\nHits: 3\n\n")
    assert cachestats.report(CCACHE, fake_runtime, tmp_path, {"E": "1"}) == "Hits: 3"
    assert fake_runtime.captures == [["ccache", "--show-log-stats", "-v"]]


def test_failed_report_is_empty(fake_runtime, tmp_path):
    fake_runtime.capture_outputs["sccache"] = (2, "sccache: no server\n")
    assert cachestats.report(SCCACHE, fake_runtime, tmp_path, {}) == ""


def test_no_report_for_a_wrapper_without_one(fake_runtime, tmp_path):
    assert cachestats.report(NONE, fake_runtime, tmp_path, {}) == ""
    assert fake_runtime.captures == []
