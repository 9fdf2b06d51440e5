"""pytest-kbuild bisect on the real Linux 6.1 tree: a git repository made
from linux-source-6.1 (a hard-linked copy) and 20 commits to kernel/fork.c,
the 13th of which breaks tinyconfig. The steps share one build directory,
so after the first two builds each rebuilds little more than fork.c."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = str(Path(sys.executable).with_name("pytest-kbuild"))
GIT = ["git", "-c", "user.name=kbuild", "-c", "user.email=kbuild@example.invalid"]
BUILD = "x86_64-gcc-tinyconfig"
BREAK = "\nint kbuild_bisect_broken(void) { return kbuild_bisect_undeclared; }\n"


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        [*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True, input=stdin
    ).stdout.strip()


@pytest.fixture(scope="module")
def linux_history(linux_tree, tmp_path_factory):
    """The tree as one commit, then 20 commits that change kernel/fork.c in
    the repository only (hash-object + update-index): the hard-linked files
    of the copy are never written."""
    work = tmp_path_factory.mktemp("bisect")
    repo = work / "linux"
    if subprocess.run(["cp", "-al", str(linux_tree), str(repo)], check=False).returncode:
        subprocess.run(["rm", "-rf", str(repo)], check=True)
        subprocess.run(["cp", "-a", str(linux_tree), str(repo)], check=True)
    started = time.monotonic()
    git(repo, "init", "-q")
    git(repo, "-c", "core.looseCompression=0", "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", "Linux 6.1 from linux-source-6.1")
    fork = (repo / "kernel" / "fork.c").read_text()
    for i in range(1, 21):
        fork += BREAK if i == 13 else f"\n/* kbuild bisect change {i} */\n"
        blob = git(repo, "hash-object", "-w", "--stdin", stdin=fork)
        git(repo, "update-index", "--cacheinfo", f"100644,{blob},kernel/fork.c")
        git(repo, "commit", "-q", "-m", f"fork: change {i}")
    print(f"repository made in {time.monotonic() - started:.0f} s")
    (work / "m.yaml").write_text(
        "tree: linux\narch: x86_64\ntoolchain: gcc\nkconfig: tinyconfig\ntargets: [config, kernel]\n"
    )
    return repo


def test_bisect_finds_the_commit_that_breaks_tinyconfig(linux_history):
    repo = linux_history
    head, before = git(repo, "rev-parse", "HEAD"), (repo / "kernel" / "fork.c").stat()
    started = time.monotonic()
    proc = subprocess.run(
        [CLI, "bisect", "--kbuild-matrix=m.yaml", f"--build={BUILD}"]
        + ["--good=HEAD~20", "--bad=HEAD"],
        cwd=repo.parent,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    took = time.monotonic() - started
    print(proc.stdout, proc.stderr, f"bisect took {took:.0f} s", sep="\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = git(repo, "rev-parse", "HEAD~7")
    assert f"I: first bad commit: {bad} fork: change 13" in proc.stdout
    assert "kernel FAIL: " in proc.stdout and "kbuild_bisect_undeclared" in proc.stdout
    assert f"kbuild --directory={repo} --target-arch=x86_64" in proc.stdout
    # The user's checkout is as it was: same HEAD, fork.c never written.
    assert git(repo, "rev-parse", "HEAD") == head
    after = (repo / "kernel" / "fork.c").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert len(git(repo, "worktree", "list").splitlines()) == 1
