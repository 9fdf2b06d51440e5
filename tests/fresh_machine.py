"""The README's main job on a fresh Debian 12, run once per test session.

The fresh machine is a podman container of the debootstrap base image that
.ci/containers makes (localhost/kbuild/base:bookworm: Debian's minbase, with
the apt sources of an installed Debian 12, bookworm, its updates and its
security updates from this host's mirrors; nothing else). The repo's
files (tracked, and new files not ignored: uncommitted edits are tested too)
are copied into it; then the README's first command runs there, as root,
with PYTEST_KBUILD_CONTAINERS=0 and restricted with -k to the one smoke
build that has every target of the matrix.

The session fixture ``fresh_machine`` (tests/integration/conftest.py) runs
it: test_fresh_machine_real.py checks the job, and test_kernel_real.py compares
its artifacts with the smoke run's (the same spec built on another machine).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.support import ROOT, require_engine

BASE_IMAGE = "localhost/kbuild/base:bookworm"
BUILD_ID = "arm64-clang-16-tinyconfig-modules"
# Measured on a 2-CPU CI machine: .ci/setup (apt, the tree, the venv) 104 s,
# the build 398 s. CI has 90 minutes for everything; this is the ceiling.
TIMEOUT = 30 * 60
LIMITS = ["--cpus=2", "--memory=8g", "--pids-limit=8192"]


@dataclass(frozen=True)
class FreshRun:
    argv: list[str]
    returncode: int
    log: Path
    setup: float  # seconds until .ci/setup said it is ready
    total: float
    results: Path  # the job's kbuild-results/, on this host

    @property
    def timing(self) -> str:
        build = self.total - self.setup
        return f"fresh machine: setup {self.setup:.0f} s, build {build:.0f} s, total {self.total:.0f} s"

    def where(self) -> str:
        """What ran and how it ended, for an assertion's message."""
        text = self.log.read_text()
        return (
            f"{self.timing}; podman: {shlex.join(self.argv)}\n"
            f"--- last lines of {self.log} ---\n{text[-6000:]}"
        )


def readme_main_job() -> str:
    """The README's first command line (the main job), as the README has it."""
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("    ") and line.strip():
            return line.strip()
    raise AssertionError("README.md has no indented command block at its top")


def repo_files() -> list[str]:
    """The repo's files as git sees them: tracked, plus new ones not ignored."""
    done = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    names = [n.decode() for n in done.stdout.split(b"\0") if n]
    return [n for n in names if (ROOT / n).is_file()]  # not files deleted in the work tree


def copy_repo(dest: Path) -> None:
    for name in repo_files():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target, follow_symlinks=False)


def pip_settings() -> list[str]:
    """podman arguments that let pip in the container reach the package index
    as this machine's pip does: its index URL (not local file indexes) and
    the CA bundle it trusts (a TLS-inspecting proxy signs with its own CA)."""
    args: list[str] = []
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    ).stdout
    settings = dict(re.findall(r"^[^.]*\.([\w-]+)='(.*)'$", listing, re.M))
    cert = os.environ.get("PIP_CERT") or settings.get("cert")
    if cert and os.path.isfile(cert):
        args += [f"--volume={cert}:/run/host-ca.pem:ro", "--env=PIP_CERT=/run/host-ca.pem"]
    index = os.environ.get("PIP_INDEX_URL") or settings.get("index-url")
    if index and index.startswith(("http://", "https://")):
        args.append(f"--env=PIP_INDEX_URL={index}")
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        if name in os.environ:
            args.append(f"--env={name}")
    return args


def run(work: Path) -> FreshRun:
    """Copy the repo to *work*/repo and run the README's main job there in a
    fresh container; the container goes however this ends."""
    require_engine("podman", BASE_IMAGE)
    repo = work / "repo"
    copy_repo(repo)
    job = f"{readme_main_job()} -k {BUILD_ID}"
    assert job.startswith(".ci/setup && .venv/bin/pytest --kbuild-matrix=matrices/smoke.yaml")
    name = f"kbuild-fresh-machine-{uuid.uuid4().hex[:12]}"
    argv = [
        "podman",
        "run",
        "--rm",
        f"--name={name}",
        *LIMITS,
        f"--volume={repo}:/src",
        "--workdir=/src",
        "--env=PYTEST_KBUILD_CONTAINERS=0",
        *pip_settings(),
        BASE_IMAGE,
        "bash",
        "-c",
        # A fresh machine has none of the tools: show it, then run the job.
        'for t in rsync bc flex bison git python3; do command -v $t || echo "fresh: no $t"; done; '
        + job,
    ]
    log = work / "fresh-machine.log"
    setup = None
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    timer = threading.Timer(TIMEOUT, proc.kill)
    timer.start()
    try:
        assert proc.stdout is not None
        with log.open("w") as out:
            for line in proc.stdout:
                out.write(line)
                out.flush()  # the log shows how far it got, also while it runs
                if setup is None and line.startswith("setup: ready"):
                    setup = time.monotonic() - started
        rc = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        subprocess.run(["podman", "rm", "--force", name], capture_output=True, check=False)
    total = time.monotonic() - started
    return FreshRun(
        argv, rc, log, total if setup is None else setup, total, repo / "kbuild-results"
    )
