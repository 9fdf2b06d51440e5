"""ccache on the real tree: hits in another build directory, and through a
redis remote storage from a machine with an empty local cache.

One cold tinyconfig kernel fills local cache A and a redis-server on
loopback; a build with an empty cache B (another "machine") and another
build directory must then hit remotely, and a build with cache A in a
third, deeper build directory must hit locally.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_kbuild import Build
from pytest_kbuild.results import METADATA, Status
from tests.support import require_tools


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of this test's own on 127.0.0.1, without persistence."""
    require_tools("redis-server")
    port = _free_port()
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not listen on port {port}")
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _build(tree: Path, tmp: Path, name: str, cache: str, build_dir: Path, remote: str | None):
    result = Build(
        tree,
        target_arch="x86_64",
        toolchain="gcc",
        kconfig="tinyconfig",
        targets=["config", "kernel"],
        wrapper="ccache",
        cache_dir=tmp / cache,
        cache_remote=remote,
        output_dir=tmp / name,
        build_dir=build_dir,
    ).run()
    assert result.status is Status.PASS, (tmp / name / "build.log").read_text()[-3000:]
    return json.loads((tmp / name / METADATA).read_text())["wrapper"]["counts"]


def test_remote_and_local_hits(linux_tree, tmp_path, redis_url):
    require_tools("gcc", "ccache")
    cold = _build(linux_tree, tmp_path, "cold", "cache-a", tmp_path / "b1", redis_url)
    assert cold["misses"] > 100 and cold["remote_errors"] == 0, cold
    # Another machine: empty local cache, another build directory.
    other = _build(linux_tree, tmp_path, "remote", "cache-b", tmp_path / "b2", redis_url)
    assert other["remote_hits"] > 0.9 * cold["misses"], (cold, other)
    assert other["remote_errors"] == 0
    # The first machine again, in a build directory at another depth.
    again = _build(linux_tree, tmp_path, "local", "cache-a", tmp_path / "x" / "y" / "b3", None)
    assert again["local_hits"] > 0.9 * cold["misses"], (cold, again)
    assert again["remote_hits"] == 0
    print(json.dumps({"cold": cold, "remote": other, "local": again}))
