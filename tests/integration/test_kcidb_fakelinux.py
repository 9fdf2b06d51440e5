"""A run with --kbuild-kcidb on fakelinux, a git checkout of it: one build
passes, one fails. The document is valid against kcidb-io's latest schema,
has the commit, both builds with KCIDB's statuses and URLs of files that
are in the results dir, and a re-run of the same spec and commit gives the
same ids."""

from __future__ import annotations

import json
import shutil
import subprocess

from kcidb_io.schema import LATEST

MATRIX = """arch: [x86_64]
toolchain: [gcc]
kconfig: [tinyconfig]
targets: [config, kernel]
include:
  - {arch: x86_64, toolchain: gcc, kconfig: tinyconfig, name: broken, env: {FAIL: kernel}}
"""
BASE = "https://ci.example.org/jobs/1/kbuild-results"


def git_tree(fakelinux, where):
    tree = where / "linux"
    shutil.copytree(fakelinux, tree)
    tree.chmod(0o755)  # the copy of the read-only tree gets a .git
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", "-b", "master"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fakelinux"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return tree, head.stdout.strip()


def test_a_run_writes_a_valid_kcidb_document_with_stable_ids(pytester, fakelinux, monkeypatch):
    tree, commit = git_tree(fakelinux, pytester.path)
    (pytester.path / "m.yaml").write_text(f"tree: {tree}\n{MATRIX}")
    args = [
        "--kbuild-matrix=m.yaml",
        "--kbuild-kcidb-origin=test_ci",
        f"--kbuild-kcidb-base-url={BASE}",
    ]
    result = pytester.runpytest_subprocess(*args, "--kbuild-kcidb=kcidb.json")
    assert result.ret == 1  # the broken build fails the run
    result.stdout.fnmatch_lines([f"KCIDB document: {pytester.path / 'kcidb.json'}"])
    doc = json.loads((pytester.path / "kcidb.json").read_text())
    LATEST.validate(doc)

    [checkout] = doc["checkouts"]
    assert checkout["git_commit_hash"] == commit and checkout["git_repository_branch"] == "master"
    builds = {b["misc"]["build_id"]: b for b in doc["builds"]}
    assert {i: b["status"] for i, b in builds.items()} == {
        "x86_64-gcc-tinyconfig": "PASS",
        "x86_64-gcc-tinyconfig-broken": "FAIL",
    }
    broken = builds["x86_64-gcc-tinyconfig-broken"]
    assert "fakelinux_injected_failure" in broken["log_excerpt"]
    assert broken["architecture"] == "x86_64" and broken["compiler"].startswith("gcc ")
    assert broken["config_name"] == "tinyconfig" and broken["duration"] > 0
    assert all(b["id"].startswith("test_ci:") for b in doc["builds"])
    # every URL is a file of the results dir, under the base URL
    urls = [b["log_url"] for b in doc["builds"]]
    urls += [f["url"] for b in doc["builds"] for f in b.get("output_files", [])]
    assert urls and all(u.startswith(BASE + "/m/") for u in urls)
    for u in urls:
        assert (pytester.path / "kbuild-results" / u.removeprefix(BASE + "/")).is_file(), u
    assert not doc["tests"]  # no boot, kunit or kselftest target

    # The same spec at the same commit, run again (the file named by the env variable).
    monkeypatch.setenv("PYTEST_KBUILD_KCIDB", "again.json")
    pytester.runpytest_subprocess(*args)
    again = json.loads((pytester.path / "again.json").read_text())
    LATEST.validate(again)

    def ids(d):
        return [o["id"] for kind in ("checkouts", "builds", "tests") for o in d[kind]]

    assert ids(again) == ids(doc)
