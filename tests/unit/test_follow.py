"""follow: a growing build.log shown as it grows (kbuild -v)."""

import io
import time

from pytest_kbuild.cli.follow import Follower


def test_copies_what_is_appended_after_it_started(tmp_path):
    log = tmp_path / "build.log"
    log.write_bytes(b"header\n")
    out = io.BytesIO()
    with Follower(log, out, interval=0.01) as f:
        with log.open("ab") as w:
            w.write(b"  CC      kernel/fork.o\n")
        deadline = time.monotonic() + 5
        while not out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert out.getvalue() == b"  CC      kernel/fork.o\n"
        with log.open("ab") as w:
            w.write(b"  LD      vmlinux\n")
        f.flush()
        assert out.getvalue().endswith(b"  LD      vmlinux\n")
    assert out.getvalue() == b"  CC      kernel/fork.o\n  LD      vmlinux\n"


def test_a_missing_file_is_followed_from_its_start(tmp_path):
    out = io.BytesIO()
    f = Follower(tmp_path / "later.log", out, interval=0.01)
    (tmp_path / "later.log").write_bytes(b"made\n")
    f.stop()
    assert out.getvalue() == b"made\n"
