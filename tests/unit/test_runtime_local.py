import os
import platform
import signal
import time

import pytest

from pytest_kbuild import runtime
from pytest_kbuild.errors import KbuildInfraError, UnknownRuntime
from pytest_kbuild.runtime import LocalRuntime, Runtime

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "BASE": "base"}


@pytest.fixture
def rt():
    return LocalRuntime(ENV)


def _run(rt, argv, tmp_path, env=None, cwd=None):
    log = tmp_path / "log"
    with log.open("wb") as out:
        rc = rt.run(argv, cwd=cwd or tmp_path, env=env or {}, output=out)
    return rc, log.read_text()


def test_implements_the_runtime_protocol(rt):
    assert isinstance(rt, Runtime)
    assert rt.name == "local"


def test_which(rt, tmp_path):
    assert rt.which("sh")
    assert rt.which("no-such-tool-kbuild") is None
    tool = tmp_path / "mytool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert LocalRuntime({"PATH": str(tmp_path)}).which("mytool") == str(tool)
    assert LocalRuntime({"PATH": str(tmp_path)}).which("sh") is None


def test_run_output_status_cwd_and_env(rt, tmp_path):
    rc, out = _run(
        rt,
        ["sh", "-c", 'echo "out $BASE $EXTRA $(pwd)"; echo err >&2; exit 3'],
        tmp_path,
        env={"EXTRA": "extra"},
    )
    assert rc == 3
    assert out == f"out base extra {tmp_path}\nerr\n"


def test_run_env_overrides_base(rt, tmp_path):
    assert _run(rt, ["sh", "-c", "echo $BASE"], tmp_path, env={"BASE": "new"})[1] == "new\n"


def test_run_has_no_stdin(rt, tmp_path):
    rc, out = _run(rt, ["sh", "-c", "cat; echo done"], tmp_path)
    assert (rc, out) == (0, "done\n")


def test_run_missing_command(rt, tmp_path):
    assert _run(rt, ["no-such-tool-kbuild", "x"], tmp_path) == (
        127,
        "no-such-tool-kbuild: command not found\n",
    )


def test_run_not_executable_is_an_infra_error(rt, tmp_path):
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o644)
    with pytest.raises(KbuildInfraError) as exc:
        _run(rt, [str(tool)], tmp_path)
    assert str(exc.value).startswith(f"cannot run {str(tool)!r}: ")


def test_run_missing_cwd_names_the_directory(rt, tmp_path):
    missing = tmp_path / "gone"
    with pytest.raises(KbuildInfraError, match="gone"):
        _run(rt, ["sh", "-c", "true"], tmp_path, cwd=missing)


def test_ctrl_c_stops_the_whole_process_group(rt, tmp_path):
    pidfile = tmp_path / "pid"
    script = f"sleep 30 & echo $! > {pidfile}; wait"

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            _run(rt, ["sh", "-c", script], tmp_path)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(pid), "the background child of the command survived Ctrl-C"


def test_a_command_dies_with_the_process_that_started_it(tmp_path):
    # A worker killed with SIGKILL left make building on, in its own session.
    import subprocess
    import sys

    pidfile = tmp_path / "pid"
    starter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys; from pathlib import Path; from pytest_kbuild.runtime import LocalRuntime\n"
                "with open(sys.argv[1] + '.log', 'wb') as out:\n"
                "    LocalRuntime().run(['sh', '-c', 'echo $$ > ' + sys.argv[1] + '; exec sleep 60'],"
                " cwd=Path('.'), env={}, output=out)"
            ),
            str(pidfile),
        ],
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 20
        while not (pidfile.is_file() and pidfile.read_text().strip()):
            assert time.monotonic() < deadline and starter.poll() is None
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        assert _alive(pid)
        starter.kill()
        starter.wait()
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(pid), "the command outlived the process that started it"
    finally:
        if starter.poll() is None:
            starter.kill()


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_capture(rt, tmp_path):
    rc, out = rt.capture(["sh", "-c", "echo $BASE; echo e >&2; exit 2"], cwd=tmp_path, env={})
    assert (rc, out) == (2, "base\ne\n")


def test_capture_missing_tool(rt, tmp_path):
    rc, out = rt.capture(["no-such-tool-kbuild", "--version"], cwd=tmp_path, env={})
    assert rc == 127
    assert "no-such-tool-kbuild" in out


def test_default_base_env_is_os_environ(tmp_path, monkeypatch):
    monkeypatch.setenv("KBUILD_UNIT_MARK", "here")
    rt = LocalRuntime()
    assert rt.capture(["sh", "-c", "echo $KBUILD_UNIT_MARK"], cwd=tmp_path, env={}) == (0, "here\n")


def test_describe(rt):
    assert rt.describe() == {
        "name": "local",
        "host": platform.node(),
        "machine": platform.machine(),
    }


# -- the registry (runtime/__init__.py) ---------------------------------------------------


def test_registry():
    assert {"local", "null"} <= set(runtime.available())
    assert runtime.available() == sorted(runtime.RUNTIMES)
    assert isinstance(runtime.make("local"), LocalRuntime)
    assert isinstance(runtime.make("null"), LocalRuntime)
    assert isinstance(runtime.make(""), LocalRuntime)


def test_unknown_runtime_message():
    with pytest.raises(UnknownRuntime) as exc:
        runtime.make("no-such-runtime", "--kbuild-runtime")
    known = ", ".join(sorted(runtime.RUNTIMES))
    assert str(exc.value) == f"--kbuild-runtime: unknown runtime 'no-such-runtime'; known: {known}"
    assert exc.value.name == "no-such-runtime"
