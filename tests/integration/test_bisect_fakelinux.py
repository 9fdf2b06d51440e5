"""pytest-kbuild bisect on a git repository made from fakelinux: 20 commits,
one of which breaks the kernel (or adds a warning); the bisect names it,
in a worktree, without touching the repository's checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BUILD = "x86_64-gcc-defconfig"
CLI = str(Path(sys.executable).with_name("pytest-kbuild"))
GIT = ["git", "-c", "user.name=kbuild", "-c", "user.email=kbuild@example.invalid"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def commit(repo: Path, subject: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject)


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """fakelinux as a repository of 21 commits: "change 13" breaks
    kernel/fork.c, "change 7" adds an unused variable to lib/string.c."""
    repo = tmp_path / "linux"
    shutil.copytree(Path(__file__).parents[2] / "fakelinux", repo)
    git(repo, "init", "-q")
    commit(repo, "base")
    for i in range(1, 21):
        if i == 13:
            text, path = "int broken_13(void) { return undeclared_13; }\n", "kernel/fork.c"
        elif i == 7:
            text, path = "static int kbuild_unused_7;\n", "lib/string.c"
        else:
            text, path = f"/* change {i} */\n", "init/main.c"
        with (repo / path).open("a") as f:
            f.write(text)
        commit(repo, f"change {i}")
    (tmp_path / "m.yaml").write_text(
        "tree: linux\narch: [x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n"
    )
    return repo


def bisect(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [CLI, "bisect", "--kbuild-matrix=m.yaml", f"--build={BUILD}", *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)


def subject_of(repo: Path, rev: str) -> str:
    return git(repo, "log", "-1", "--format=%s", rev).strip()


def test_bisect_finds_the_commit_that_breaks_the_kernel(history):
    head = git(history, "rev-parse", "HEAD")
    proc = bisect(history.parent, "--good=HEAD~20", "--bad=HEAD")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = git(history, "rev-parse", "HEAD~7").strip()
    assert subject_of(history, bad) == "change 13"
    assert f"I: first bad commit: {bad} change 13" in proc.stdout
    assert "kernel FAIL: " in proc.stdout and "undeclared_13" in proc.stdout
    assert f"switch --detach {bad[:12]} && kbuild --directory={history}" in proc.stdout
    # git bisect's own log, replayable, and one results dir per step
    work = history.parent / "kbuild-bisect" / BUILD
    log = (work / "bisect.log").read_text()
    assert "git bisect start" in log and f"first bad commit: [{bad}] change 13" in log
    steps = sorted(p.name for p in (work / "steps").iterdir())
    assert 4 <= len(steps) <= 8 and all((work / "steps" / s / "build.log").is_file() for s in steps)
    # the user's checkout: same HEAD, no change, no worktree or bisect left
    assert git(history, "rev-parse", "HEAD") == head
    assert git(history, "status", "--porcelain") == ""
    assert len(git(history, "worktree", "list").splitlines()) == 1
    assert not (history / ".git" / "BISECT_LOG").exists()


def test_bisect_finds_the_commit_that_adds_a_diagnostic(history):
    proc = bisect(history.parent, "--good=HEAD~20", "--bad=HEAD~10", "--diagnostic=kbuild_unused_7")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = git(history, "rev-parse", "HEAD~13").strip()
    assert f"I: first bad commit: {bad} change 7" in proc.stdout
    assert "has 'kbuild_unused_7'" in proc.stdout


def test_a_commit_that_fails_without_the_diagnostic_is_skipped(history):
    # "change 13" to "change 20" fail before they could say anything; then
    # a fix, four good commits and the one that adds the diagnostic.
    fork = history / "kernel" / "fork.c"
    fork.write_text(fork.read_text().replace("int broken_13(void) { return undeclared_13; }\n", ""))
    commit(history, "fix 13")
    for i in range(22, 26):
        with (history / "init" / "main.c").open("a") as f:
            f.write(f"/* change {i} */\n")
        commit(history, f"change {i}")
    with (history / "init" / "main.c").open("a") as f:
        f.write("static int kbuild_late_26;\n")
    commit(history, "change 26")
    proc = bisect(history.parent, "--good=HEAD~14", "--bad=HEAD", "--diagnostic=kbuild_late_26")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skipped = [ln for ln in proc.stdout.splitlines() if " skip " in ln]
    assert skipped and all("FAIL without 'kbuild_late_26'" in ln for ln in skipped)
    bad = git(history, "rev-parse", "HEAD").strip()
    assert f"I: first bad commit: {bad} change 26" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--good=nosuchrev", "--bad=HEAD"],
            "--good 'nosuchrev' is not a commit of the repository",
        ),
        (["--good=HEAD~20", "--bad=v9.9"], "--bad 'v9.9' is not a commit of the repository"),
        (["--good=HEAD", "--bad=HEAD~20"], "--good 'HEAD' is not an ancestor of --bad 'HEAD~20'"),
        (["--good=HEAD~3", "--bad=HEAD"], "--good {r3} is bad (kernel FAIL: "),
        (
            ["--good=HEAD~20", "--bad=HEAD~10"],
            "--bad {r10} is good (PASS): give a revision that fails",
        ),
        (["--good=HEAD~20", "--bad=HEAD", "--target=dtbs"], "--target 'dtbs' is not a target"),
    ],
)
def test_bisect_bad_input_is_a_clear_error(history, args, message):
    revs = {
        "r3": git(history, "rev-parse", "HEAD~3")[:12],
        "r10": git(history, "rev-parse", "HEAD~10")[:12],
    }
    proc = bisect(history.parent, *args)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert message.format(**revs) in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert len(git(history, "worktree", "list").splitlines()) == 1


def test_bisect_of_a_tree_without_history_or_an_unknown_build(history):
    shutil.rmtree(history / ".git")
    proc = bisect(history.parent, "--good=a", "--bad=b")
    assert proc.returncode == 1
    assert f"the tree {history} is not a git repository" in proc.stderr
    argv = [CLI, "bisect", "--kbuild-matrix=m.yaml", "--build=arm64-gcc-x", "--good=a", "--bad=b"]
    proc = subprocess.run(argv, cwd=history.parent, capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"--build 'arm64-gcc-x' is not a build of m.yaml; it has: {BUILD}" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
