"""The kbuild command, the Python API, URL kconfigs and Ctrl-C, on fakelinux."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from pytest_kbuild import Build, Status
from tests.support import ctrl_c_reaches_child, path_without


def kbuild(tree, *args, env=None, cwd=None):
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from pytest_kbuild.cli import kbuild_main; raise SystemExit(kbuild_main())",
            f"--directory={tree}",
            *args,
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def test_kbuild_prints_reproducer_then_target_lines(fakelinux, tmp_path):
    proc = kbuild(
        fakelinux,
        "-a",
        "arm64",
        "-t",
        "gcc",
        "-k",
        "tinyconfig",
        "-K",
        "CONFIG_MODULES=y",
        "-K",
        "CONFIG_FAKE_DRIVER=m",
        "-o",
        str(tmp_path / "out"),
        "config",
        "kernel",
        "modules",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("# to reproduce this build: kbuild ")
    assert "--kconfig-add=CONFIG_MODULES=y" in lines[0]
    assert [ln.split(" in ")[0] for ln in lines[1:4]] == [
        "I: config: PASS",
        "I: kernel: PASS",
        "I: modules: PASS",
    ]
    assert all(len(ln.split(" in ")[1].split(":")) == 3 for ln in lines[1:4])  # H:MM:SS
    assert (tmp_path / "out" / "Image.gz").is_file()


def test_kbuild_exit_codes(fakelinux, tmp_path):
    failed = kbuild(
        fakelinux,
        "-k",
        "defconfig",
        "-o",
        str(tmp_path / "a"),
        "config",
        "kernel",
        env={"FAIL": "kernel"},
    )
    assert failed.returncode == 2
    assert "I: kernel: FAIL" in failed.stdout and "error:" in failed.stdout
    bad = kbuild(fakelinux, "-a", "arm46", "config")
    assert bad.returncode == 1
    assert "unknown arch 'arm46'" in bad.stderr
    missing = kbuild(fakelinux, "-t", "gcc-8", "-o", str(tmp_path / "b"), "config")
    assert missing.returncode == 125  # infrastructure: git bisect run skips the commit
    assert "'gcc-8' not found on PATH" in missing.stderr


def test_kbuild_without_rsync_builds_the_kernel_and_errors_on_headers(fakelinux, tmp_path):
    env = {"PATH": str(path_without(tmp_path, "rsync"))}
    out = tmp_path / "b"
    proc = kbuild(fakelinux, "-o", str(out), "config", "kernel", "headers", env=env)
    assert proc.returncode == 125, proc.stdout + proc.stderr  # infrastructure, not a kernel FAIL
    assert re.search(r"^I: kernel: PASS in ", proc.stdout, re.M), proc.stdout
    assert re.search(
        r"^I: headers: ERROR in 0:00:00 \(target headers \(runtime local\): 'rsync' not found "
        r"on PATH; on Debian install: rsync\)$",
        proc.stdout,
        re.M,
    ), proc.stdout
    assert json.loads((out / "metadata.json").read_text())["status"] == "ERROR"


def test_python_api_returns_per_target_results(fakelinux, tmp_path):
    result = Build(
        fakelinux,
        target_arch="x86_64",
        toolchain="gcc",
        kconfig="tinyconfig",
        targets=["config", "kernel", "modules"],
        output_dir=tmp_path / "out",
    ).run()
    assert result.status is Status.PASS
    assert result["kernel"].passed and result["kernel"].artifacts[0].name == "bzImage"
    assert result["modules"].status is Status.SKIP
    assert "CONFIG_MODULES=y" in result["modules"].reason


@pytest.fixture
def http_server(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_kconfig_and_fragment_from_urls(pytester, fakelinux, http_server):
    served, base = http_server
    (served / "base.config").write_text("CONFIG_MODULES=y\nCONFIG_FAKE_DRIVER=m\n")
    (served / "frag.config").write_text("CONFIG_LOG_BUF_SHIFT=15\n")
    (pytester.path / "m.yaml").write_text(
        f"tree: {fakelinux}\narch: x86_64\ntoolchain: gcc\nkconfig: {base}/base.config\n"
        f"kconfig_add: [{base}/frag.config]\ntargets: [config, modules]\n"
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(passed=2)
    out = pytester.path / "kbuild-results/m/x86_64-gcc-base.config"
    assert "CONFIG_LOG_BUF_SHIFT=15" in (out / "config").read_text()
    sources = json.loads((out / "metadata.json").read_text())["kconfig_sources"]
    assert [s["kind"] for s in sources] == ["url", "url"]


def test_kconfig_url_404_is_a_clear_error(pytester, fakelinux, http_server):
    _, base = http_server
    (pytester.path / "m.yaml").write_text(
        f"tree: {fakelinux}\narch: x86_64\ntoolchain: gcc\nkconfig: {base}/missing.config\ntargets: [config]\n"
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(errors=1, failed=0)  # the server, not the kernel
    result.stdout.fnmatch_lines([f"*cannot fetch kconfig '{base}/missing.config': HTTP 404*"])


def test_ctrl_c_stops_make_and_keeps_log_and_metadata(fakelinux, tmp_path):
    (tmp_path / "m.yaml").write_text(
        f"tree: {fakelinux}\narch: x86_64\ntoolchain: gcc\ntargets: [config, kernel]\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--kbuild-matrix=m.yaml"],
        cwd=tmp_path,
        env={**os.environ, "FAKELINUX_SLEEP": "60"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=ctrl_c_reaches_child,
    )
    meta_path = tmp_path / "kbuild-results/m/x86_64-gcc-defconfig/metadata.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if meta_path.is_file() and json.loads(meta_path.read_text())["targets"].get("config"):
            break
        time.sleep(0.2)
    time.sleep(1.0)  # kernel target is sleeping inside make now
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2, out
    assert "KeyboardInterrupt" in out
    meta = json.loads(meta_path.read_text())
    assert meta["targets"]["config"]["status"] == "PASS"
    assert meta["targets"]["kernel"]["status"] == "INTERRUPTED"
    assert meta["status"] == "INTERRUPTED"
    assert "$ make" in (meta_path.parent / "build.log").read_text()
    leftover = subprocess.run(
        ["pgrep", "-f", f"O={meta['build_dir']}"], capture_output=True, text=True
    )
    assert leftover.stdout == ""


@pytest.mark.parametrize("wrapper", ["ccache", "sccache"])
def test_wrapper_wraps_cc_and_records_stats(fakelinux, tmp_path, wrapper, request):
    from tests.support import require_tools

    require_tools(wrapper)
    if wrapper == "sccache":
        # A running sccache server keeps the cache dir it was started with.
        subprocess.run(["sccache", "--stop-server"], capture_output=True, check=False)
        request.addfinalizer(
            lambda: subprocess.run(["sccache", "--stop-server"], capture_output=True, check=False)
        )
    cache = tmp_path / "cache"
    for run in ("cold", "warm"):
        result = Build(
            fakelinux,
            target_arch="x86_64",
            toolchain="gcc",
            kconfig="defconfig",
            targets=["config", "kernel"],
            wrapper=wrapper,
            cache_dir=cache,
            output_dir=tmp_path / run,
        ).run()
        assert result.status is Status.PASS
    meta = json.loads((tmp_path / "warm" / "metadata.json").read_text())
    assert (
        meta["makevars"]["CC"] == f"{wrapper} gcc"
        and meta["makevars"]["HOSTCC"] == f"{wrapper} gcc"
    )
    assert meta["wrapper"]["cache_dir"] == str(cache)
    hits = re.search(r"hits\s*:?\s+(\d+)", meta["wrapper"]["stats"], re.IGNORECASE)
    assert hits and int(hits.group(1)) > 0, meta["wrapper"]["stats"]
    assert any(cache.iterdir())


@pytest.mark.parametrize(
    ("targets", "written"), [(["config"], False), (["config", "kernel"], True)], ids=str
)
def test_kernelrelease_is_recorded_for_a_config_only_build_too(
    fakelinux, tmp_path, targets, written
):
    # A config alone writes no include/config/kernel.release: make
    # kernelrelease is asked, with the build's O= and make variables.
    out = tmp_path / "out"
    proc = kbuild(
        fakelinux,
        "--target-arch=x86_64",
        "--toolchain=gcc",
        f"--output-dir={out}",
        f"--build-dir={tmp_path / 'b'}",
        "LOCALVERSION=-mine",
        *targets,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "metadata.json").read_text())["kernelrelease"] == "6.1.0-mine"
    assert (tmp_path / "b/include/config/kernel.release").is_file() is written
