"""folds.py: failed builds' log tails folded in a CI job's log, and a log's
URL among a GitLab job's artifacts."""

from __future__ import annotations

from pytest_kbuild.report import folds

GITHUB = {"GITHUB_ACTIONS": "true"}
GITLAB = {"GITLAB_CI": "true"}


def test_a_fold_is_a_github_group_a_gitlab_section_or_nothing():
    assert folds.fold("x86 kernel FAIL", ["a", "b"], GITHUB) == [
        "::group::x86 kernel FAIL",
        "a",
        "b",
        "::endgroup::",
    ]
    start, *body, end = folds.fold("a/x86 kernel: log", ["a"], GITLAB, now=lambda: 1700000000)
    assert start == (
        "\x1b[0Ksection_start:1700000000:a_x86_kernel__log[collapsed=true]\r\x1b[0Ka/x86 kernel: log"
    )
    assert body == ["a"] and end == "\x1b[0Ksection_end:1700000000:a_x86_kernel__log\r\x1b[0K"
    assert folds.fold("t", ["a"], {}) == ["t", "a"]


def _run(tmp_path):
    log = tmp_path / "m" / "x86_64-gcc-defconfig" / "build.log"
    log.parent.mkdir(parents=True)
    config = "$ make defconfig\nconfigured\n"
    kernel = "$ make bzImage\nfork.c:1:2: error: 'x' undeclared\nmake: *** Error 1\n"
    log.write_text(config + kernel)
    builds = {
        "m.yaml::x86_64-gcc-defconfig": {
            "build_id": "x86_64-gcc-defconfig",
            "matrix": "m.yaml",
            "arch": "x86_64",
            "toolchain": "gcc",
            "kconfig": "defconfig",
            "targets": {
                "config": {"outcome": "passed", "status": "PASS", "log": str(log)},
                "kernel": {"outcome": "failed", "status": "FAIL", "log": str(log)},
            },
        },
        "m.yaml::arm64-gcc-defconfig": {
            "build_id": "arm64-gcc-defconfig",
            "matrix": "m.yaml",
            "arch": "arm64",
            "toolchain": "gcc",
            "kconfig": "defconfig",
            "targets": {"config": {"outcome": "passed", "status": "PASS", "log": str(log)}},
        },
    }
    span = {"log_start": len(config), "log_end": len(config) + len(kernel)}
    records = {"x86_64-gcc-defconfig": {"targets": {"kernel": span}}}
    return builds, records


def test_each_failed_build_shows_its_failed_targets_lines_folded(tmp_path):
    builds, records = _run(tmp_path)
    assert folds.failed_logs(builds, records, GITHUB) == [
        "::group::x86_64-gcc-defconfig kernel FAIL: last lines of build.log",
        "$ make bzImage",
        "fork.c:1:2: error: 'x' undeclared",
        "make: *** Error 1",
        "::endgroup::",
    ]
    assert folds.failed_logs(builds, records, {}) == []  # the failures have the tails


def test_a_gone_log_is_left_out(tmp_path):
    builds, records = _run(tmp_path)
    for b in builds.values():
        for t in b["targets"].values():
            t["log"] = str(tmp_path / "gone.log")
    assert folds.failed_logs(builds, records, GITHUB) == []


def test_a_logs_url_among_a_gitlab_jobs_artifacts(tmp_path):
    env = {
        **GITLAB,
        "CI_JOB_URL": "https://gitlab.example.org/g/linux/-/jobs/42",
        "CI_PROJECT_DIR": str(tmp_path),
    }
    log = tmp_path / "kbuild-results" / "m" / "x86 64" / "build.log"
    assert folds.artifact_url(log, env) == (
        "https://gitlab.example.org/g/linux/-/jobs/42/artifacts/file/kbuild-results/m/x86%2064/build.log"
    )
    assert folds.artifact_url(tmp_path.parent / "elsewhere.log", env) == ""
    assert folds.artifact_url(log, {**env, "GITLAB_CI": ""}) == ""
    assert folds.artifact_url(log, GITLAB) == ""
