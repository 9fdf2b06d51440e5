"""A run in a GitHub Actions step, on fakelinux: one build fails, one warns.
The diagnostics become workflow commands at their lines in the repository
(the tree is a directory of GITHUB_WORKSPACE), and the summary is appended
to GITHUB_STEP_SUMMARY; a summary that cannot be written is a message and
never the run's failure."""

from __future__ import annotations

import json
import re
import shutil

from tests.support import builds_by_id, sarif_problems

MATRIX = """arch: [x86_64]
toolchain: [gcc]
targets: [config, kernel]
include:
  - {arch: arm64, toolchain: gcc, env: {FAIL: kernel}, targets: [config, kernel]}
  - {arch: x86_64, toolchain: gcc, env: {WARN: kernel}, targets: [config, kernel], name: warny}
"""


def github_step(pytester, fakelinux, monkeypatch):
    workspace = pytester.path / "workspace"
    shutil.copytree(fakelinux, workspace / "linux")
    (pytester.path / "m.yaml").write_text(f"tree: {workspace / 'linux'}\n{MATRIX}")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    return workspace


def test_annotations_on_the_diff_and_the_step_summary(pytester, fakelinux, monkeypatch):
    github_step(pytester, fakelinux, monkeypatch)
    summary = pytester.path / "summary.md"
    summary.write_text("## an earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-n", "2")
    assert result.ret == 1
    out = result.stdout.str()
    error = re.search(
        r"^::error file=linux/scripts/inject/fail\.c,line=\d+,col=\d+,title=compiler error%3A 1 build::.*\(arm64-gcc-defconfig\)$",
        out,
        re.M,
    )
    assert error, out[-3000:]
    warning = re.search(
        r"^::warning file=linux/scripts/inject/warn\.c,line=\d+,col=\d+,title=compiler warning \[-Wunused-variable\]%3A 1 build::",
        out,
        re.M,
    )
    assert warning, out[-3000:]
    # The annotations (the failed build's log tail is a ::group:: of its own)
    commands = [
        ln for ln in out.splitlines() if ln.startswith(("::error", "::warning", "::notice"))
    ]
    assert "::group::arm64-gcc-defconfig kernel FAIL: last lines of build.log" in out
    # make's "Error 1" only repeats the compiler's error; nothing is left out
    assert len(commands) == 2, commands
    text = summary.read_text()
    assert text.startswith("## an earlier step\n## kbuild: 3 builds (")
    assert "FAIL kernel" in text and "### Failed builds" in text
    assert "arm64-gcc-defconfig kernel FAIL: " in text and "reproduce: kbuild " in text
    assert "### Diagnostics (3)" in text


def test_a_summary_that_cannot_be_written_is_a_message(pytester, fakelinux, monkeypatch):
    github_step(pytester, fakelinux, monkeypatch)
    bad = pytester.path / "gone" / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(bad))
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-k", "x86_64")
    assert result.ret == 0  # the warning build passes; the summary does not change that
    result.stdout.fnmatch_lines([f"kbuild: GITHUB_STEP_SUMMARY={bad} not written: *"])
    assert (pytester.path / "kbuild-results" / "results.json").is_file()


def test_outside_github_actions_nothing_is_printed(pytester, fakelinux, monkeypatch):
    github_step(pytester, fakelinux, monkeypatch)
    monkeypatch.delenv("GITHUB_ACTIONS")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-k", "warny")
    assert result.ret == 0 and "::warning" not in result.stdout.str()
    result.stdout.fnmatch_lines(["1 build (2 passed); results in *"])  # not "1 builds"


def test_sarif_for_code_scanning_names_the_failing_builds_first_error(
    pytester, fakelinux, monkeypatch
):
    github_step(pytester, fakelinux, monkeypatch)
    monkeypatch.delenv("GITHUB_ACTIONS")  # the SARIF log does not need a GitHub step
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-sarif=k.sarif")
    assert result.ret == 1
    doc = json.loads((pytester.path / "k.sarif").read_text())
    assert sarif_problems(doc) == []
    summary = json.loads((pytester.path / "kbuild-results" / "results.json").read_text())
    first = builds_by_id(summary)["arm64-gcc-defconfig"]["targets"]["kernel"]["first_error"]
    (run,) = doc["runs"]
    # the compiler's error; make's "[target] Error 1" that repeats it is a note
    (error,) = [r for r in run["results"] if r["level"] == "error"]
    assert error["properties"]["builds"] == ["arm64-gcc-defconfig"], error
    assert error["message"]["text"].split("error: ", 1)[1].split(" (1 build")[0] in first
    assert [r["ruleId"] for r in run["results"] if r["level"] == "note"] == ["make"]
    where = error["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == "linux/scripts/inject/fail.c"
    assert where["region"]["startLine"] > 0
    warning = next(r for r in run["results"] if r["ruleId"] == "compiler/-Wunused-variable")
    assert warning["properties"]["builds"] == ["x86_64-gcc-defconfig-warny"]
