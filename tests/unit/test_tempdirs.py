"""tempdirs.py: temporary dirs owned through a locked owner file, and the
sweep that removes those of dead owners only."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pytest_kbuild.build import workdirs
from pytest_kbuild.run import jobserver, tempdirs

HOLDER = (
    "import sys\n"
    "from pytest_kbuild.run import tempdirs\n"
    "print(tempdirs.make(sys.argv[1], sys.argv[2]), flush=True)\n"
    "sys.stdin.read()\n"
)


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A temporary root of the test's own: tempfile's documented default."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def holder(root: Path, kind: str = "build", prefix: str = "kbuild-x86_64-gcc-defconfig-"):
    """Another process that owns a new dir until its stdin closes: (proc, dir)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, kind, prefix],
        env={**os.environ, "TMPDIR": str(root)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def locked(path: Path) -> bool:
    fd = os.open(path / tempdirs.OWNER, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_made_dir_says_who_owns_it_and_is_locked_until_removed(root):
    path = tempdirs.make("jobserver", "kbuild-jobserver-")
    assert path.parent == root and path.name.startswith("kbuild-jobserver-")
    who = json.loads((path / tempdirs.OWNER).read_text())
    assert who["kind"] == "jobserver" and who["pid"] == os.getpid()
    assert who["host"] == socket.gethostname() and who["started"].endswith("+00:00")
    assert sorted(p.name for p in path.iterdir()) == [tempdirs.OWNER]  # no .part left
    assert locked(path)
    assert tempdirs.sweep() == []  # its owner lives: this very process
    tempdirs.remove(path)
    assert not path.exists()
    tempdirs.remove(path)  # idempotent


def test_unknown_kind_or_prefix_is_refused(root):
    with pytest.raises(ValueError, match="'cache'"):
        tempdirs.make("cache")
    with pytest.raises(ValueError, match="'tmp-'"):
        tempdirs.make("build", "tmp-")
    assert list(root.iterdir()) == []


def test_a_live_holder_in_another_process_keeps_its_dir_and_its_death_frees_it(root):
    proc, path = holder(root)
    try:
        assert locked(path)
        assert tempdirs.sweep() == []
        assert path.is_dir()
    finally:
        proc.kill()  # SIGKILL: no cleanup of its own
        proc.wait()
    assert proc.returncode == -signal.SIGKILL and path.is_dir()
    stale = tempdirs.sweep()
    assert [s.line() for s in stale] == [
        f"removed stale build dir {path} (owner pid {proc.pid} died)"
    ]
    assert not path.exists()
    assert tempdirs.sweep() == []  # once


def test_sweep_removes_every_kind_and_keeps_what_is_not_a_dead_runs(root):
    dead = {}
    for kind, prefix in [
        ("build", "kbuild-a-"),
        ("jobserver", "kbuild-jobserver-"),
        ("results", "kbuild-results-"),
    ]:
        proc, path = holder(root, kind, prefix)
        proc.kill()
        proc.wait()
        dead[path] = (kind, proc.pid)
    (path / "fifo").touch()  # what was inside goes too
    live = tempdirs.make("build", "kbuild-b-")
    no_owner = root / "kbuild-old-release"  # a dir from before owner files
    no_owner.mkdir()
    not_ours = root / "other-tool-dir"
    not_ours.mkdir()
    stale = tempdirs.sweep(root)
    assert {s.path: (s.kind, s.pid) for s in stale} == dead
    assert all(s.removed for s in stale)
    assert [s.path for s in stale] == sorted(dead)
    assert live.is_dir() and no_owner.is_dir() and not_ours.is_dir()
    tempdirs.remove(live)


def forge(root: Path, name: str, **fields) -> Path:
    """A dir whose owner file (unlocked: its owner is gone) says *fields*."""
    path = root / name
    path.mkdir()
    who = {"kind": "build", "pid": 4711, "host": socket.gethostname(), "started": "x"}
    (path / tempdirs.OWNER).write_text(json.dumps({**who, **fields}))
    return path


def test_a_dir_of_another_host_or_kind_or_with_a_bad_owner_file_is_kept(root):
    kept = [
        forge(root, "kbuild-1", host="ci-7"),  # a shared /tmp: its locks are not ours to see
        forge(root, "kbuild-2", kind="cache"),
        forge(root, "kbuild-3", pid="many"),
    ]
    broken = root / "kbuild-4"
    broken.mkdir()
    (broken / tempdirs.OWNER).write_text("{not json")
    gone = forge(root, "kbuild-5")
    assert [s.line() for s in tempdirs.sweep()] == [
        f"removed stale build dir {gone} (owner pid 4711 died)"
    ]
    assert all(p.is_dir() for p in [*kept, broken])


@pytest.mark.skipif(os.getuid() != 0, reason="chown to another user needs root")
def test_a_dir_of_another_user_is_kept(root):
    path = forge(root, "kbuild-1")
    os.chown(path / tempdirs.OWNER, 65534, 65534)
    assert tempdirs.sweep() == []
    os.chown(path / tempdirs.OWNER, 0, 0)
    os.chown(path, 65534, 65534)
    assert tempdirs.sweep() == []
    assert path.is_dir()


def test_an_owner_file_that_is_a_symlink_is_not_followed(root):
    path = root / "kbuild-1"
    path.mkdir()
    real = forge(root, "elsewhere")
    (path / tempdirs.OWNER).symlink_to(real / tempdirs.OWNER)
    assert tempdirs.sweep() == []
    assert path.is_dir()


def test_a_dir_that_cannot_be_removed_is_said_so():
    stale = tempdirs.Stale("build", Path("/t/kbuild-1"), 42, removed=False, error="Busy")
    assert stale.line() == (
        "stale build dir /t/kbuild-1 (owner pid 42 died) could not be removed: Busy"
    )


def test_a_missing_root_sweeps_nothing(tmp_path):
    assert tempdirs.sweep(tmp_path / "missing") == []


def test_a_temporary_build_dir_is_owned_and_a_kept_one_is_disowned(root):
    build = workdirs.make_build_dir(None, "x86_64-gcc-defconfig")
    assert workdirs.is_temporary(build) and locked(build.parent)
    assert json.loads((build.parent / tempdirs.OWNER).read_text())["kind"] == "build"
    workdirs.keep_temporary(build)  # --kbuild-keep-build-dir
    assert not (build.parent / tempdirs.OWNER).exists()
    assert tempdirs.sweep() == [] and build.is_dir()
    other = workdirs.make_build_dir(None, "arm64-gcc-defconfig")
    workdirs.remove_temporary(other)
    assert not other.parent.exists()


def test_the_jobserver_dir_is_owned(root):
    server = jobserver.Jobserver(2)
    try:
        fifo_dir = server.path.parent
        assert fifo_dir.parent == root and locked(fifo_dir)
        assert json.loads((fifo_dir / tempdirs.OWNER).read_text())["kind"] == "jobserver"
    finally:
        server.close()
    assert not fifo_dir.exists()
