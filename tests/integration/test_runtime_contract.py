"""One contract for every runtime (local, podman, docker), run for real on
fakelinux: the same matrix gives the same outcomes, files belong to the
caller, the tree stays read-only, no network, no container left behind."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest

from pytest_kbuild import Build, Status
from pytest_kbuild.errors import ImageNotFound, KbuildInfraError
from pytest_kbuild.runtime import make as make_runtime
from pytest_kbuild.runtime.base import Workspace
from pytest_kbuild.runtime.container import CONTAINER_LABEL, ContainerOptions
from tests.support import (
    X86_64_GCC,
    builds_by_id,
    ctrl_c_reaches_child,
    require_engine,
    require_tools,
)

ENGINES = ("podman", "docker")


@pytest.fixture(params=["local", *ENGINES])
def runtime_name(request):
    if request.param in ENGINES:
        require_engine(request.param, X86_64_GCC)
    else:
        require_tools("gcc", "make")
    return request.param


@pytest.fixture(params=ENGINES)
def engine(request):
    require_engine(request.param, X86_64_GCC)
    return request.param


MATRIX = """
arch: [x86_64]
toolchain: [gcc]
kconfig: [defconfig]
targets: [config, kernel, modules, headers]
include:
  - {arch: x86_64, toolchain: gcc, kconfig: tinyconfig, name: broken,
     env: {FAIL: kernel, WARN: headers}, targets: [config, kernel, modules, headers]}
"""

EXPECTED = {
    "x86_64-gcc-defconfig": {
        "config": "passed",
        "kernel": "passed",
        "modules": "passed",
        "headers": "passed",
    },
    # tinyconfig has no CONFIG_MODULES: a skip whatever the runtime
    "x86_64-gcc-tinyconfig-broken": {
        "config": "passed",
        "kernel": "failed",
        "modules": "skipped",
        "headers": "passed",
    },
}


def test_same_matrix_same_outcomes_under_every_runtime(pytester, fakelinux, runtime_name):
    (pytester.path / "m.yaml").write_text(f"tree: {fakelinux}\n{MATRIX}")
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", f"--kbuild-runtime={runtime_name}", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=6, failed=1, skipped=1)
    summary = json.loads((pytester.path / "kbuild-results" / "results.json").read_text())
    outcomes = {
        bid: {t: v["outcome"] for t, v in b["targets"].items()}
        for bid, b in builds_by_id(summary).items()
    }
    assert outcomes == EXPECTED
    broken = pytester.path / "kbuild-results" / "m" / "x86_64-gcc-tinyconfig-broken"
    log = (broken / "build.log").read_text()
    # gcc quotes with ' or with typographic quotes, depending on the locale.
    assert re.search(r"error: .fakelinux_injected_failure. undeclared", log)
    assert re.search(r"warning: unused variable .fakelinux_injected_warning.", log)
    meta = json.loads((broken / "metadata.json").read_text())
    assert meta["runtime"]["name"] == runtime_name
    assert meta["toolchain"]["version"].startswith("gcc (Debian 12")
    assert f"--runtime={runtime_name}" in meta["reproducer"]
    if runtime_name in ENGINES:
        image = meta["runtime"]["image"]
        assert image["id"].startswith("sha256:")
        assert f"--image={image['pinned']}" in meta["reproducer"]
        assert f"# in {runtime_name}: {runtime_name} run --rm" in log
    out = pytester.path / "kbuild-results" / "m" / "x86_64-gcc-defconfig"
    for p in out.iterdir():
        assert p.stat().st_uid == os.getuid(), p


def _bound(engine, tmp_path, fakelinux, **options):
    ws = Workspace("x86_64", "gcc", fakelinux, tmp_path / "build")
    ws.build_dir.mkdir(exist_ok=True)
    return make_runtime(engine, options=ContainerOptions(**options)).bind(ws), ws


def _run(rt, argv, ws, tmp_path):
    with (tmp_path / "out.log").open("wb") as out:
        rc = rt.run(argv, cwd=ws.build_dir, env={}, output=out)
    return rc, (tmp_path / "out.log").read_text()


def test_tree_is_read_only_build_dir_writable_and_owned_by_caller(engine, tmp_path, fakelinux):
    rt, ws = _bound(engine, tmp_path, fakelinux)
    rc, log = _run(rt, ["touch", f"{ws.tree}/written-by-a-build"], ws, tmp_path)
    assert rc != 0, log
    assert "Read-only file system" in log
    assert not (fakelinux / "written-by-a-build").exists()
    rc, log = _run(rt, ["touch", f"{ws.build_dir}/made-here"], ws, tmp_path)
    assert rc == 0, log
    made = ws.build_dir / "made-here"
    assert (made.stat().st_uid, made.stat().st_gid) == (os.getuid(), os.getgid())


def test_no_network_unless_asked(engine, tmp_path, fakelinux):
    rt, ws = _bound(engine, tmp_path, fakelinux)
    rc, out = rt.capture(["ls", "/sys/class/net"], cwd=None, env={})
    assert rc == 0 and out.split() == ["lo"], out
    rt, ws = _bound(engine, tmp_path, fakelinux, network="host")
    rc, out = rt.capture(["ls", "/sys/class/net"], cwd=None, env={})
    assert rc == 0 and len(out.split()) > 1, out


def _containers_of(engine, build_dir):
    done = subprocess.run(
        [engine, "ps", "--all", "--quiet", "--filter", f"label={CONTAINER_LABEL}={build_dir}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def test_containers_are_removed_after_failure(engine, tmp_path, fakelinux):
    result = Build(
        fakelinux,
        target_arch="x86_64",
        toolchain="gcc",
        kconfig="defconfig",
        targets=["config", "kernel"],
        environment={"FAIL": "kernel"},
        runtime=engine,
        output_dir=tmp_path / "out",
        build_dir=tmp_path / "build",
    ).run()
    assert result.targets["kernel"].status is Status.FAIL
    assert _containers_of(engine, tmp_path / "build") == []


def test_ctrl_c_removes_the_running_container_and_keeps_log_and_metadata(
    engine, tmp_path, fakelinux
):
    out = tmp_path / "out"
    build_dir = tmp_path / "build"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from pytest_kbuild.cli import kbuild_main; raise SystemExit(kbuild_main())",
            f"--directory={fakelinux}",
            f"--runtime={engine}",
            "-a",
            "x86_64",
            "-k",
            "defconfig",
            "-e",
            "FAKELINUX_SLEEP=120",
            f"--output-dir={out}",
            f"--build-dir={build_dir}",
            "config",
            "kernel",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=ctrl_c_reaches_child,
    )
    meta_path = out / "metadata.json"

    def kernel_running() -> bool:
        if not meta_path.is_file() or not _containers_of(engine, build_dir):
            return False
        return "config" in json.loads(meta_path.read_text()).get("targets", {})

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not kernel_running():
        time.sleep(0.3)
    assert kernel_running(), "the kernel step's container did not start"
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode != 0, output
    assert _containers_of(engine, build_dir) == []
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "INTERRUPTED", output
    assert "# in " in (out / "build.log").read_text()


def test_missing_image_is_a_setup_error_that_says_how_to_build_it(engine, tmp_path, fakelinux):
    build = Build(
        fakelinux,
        target_arch="x86_64",
        toolchain="gcc",
        targets=["config"],
        runtime=engine,
        image="localhost/kbuild/nonexistent_{toolchain}",
        pull="never",
        output_dir=tmp_path / "out",
    )
    with pytest.raises(ImageNotFound):
        build.run()
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["status"] == "ERROR"
    assert meta["error"] == (
        f"image 'localhost/kbuild/nonexistent_gcc' ({engine}): not present locally "
        "(pull policy: never); build it locally with: pytest-kbuild images build "
        f"--arch x86_64 --toolchain gcc --engine {engine}"
    )


def test_reproducer_line_rebuilds_with_the_pinned_image(engine, tmp_path, fakelinux):
    first = Build(
        fakelinux,
        target_arch="x86_64",
        toolchain="gcc",
        kconfig="tinyconfig",
        targets=["config", "kernel"],
        runtime=engine,
        image="localhost/kbuild/{arch}_{toolchain}",
        output_dir=tmp_path / "first",
    )
    assert first.run().status is Status.PASS
    line = first.reproducer()
    assert "--image=localhost/kbuild/x86_64_gcc@sha256:" in line
    argv = shlex.split(line)[1:] + ["--output-dir", str(tmp_path / "again")]  # a shell line
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pytest_kbuild.cli import kbuild_main as m; raise SystemExit(m())",
            *argv,
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    metas = [json.loads((tmp_path / d / "metadata.json").read_text()) for d in ("first", "again")]
    assert metas[0]["runtime"]["image"]["id"] == metas[1]["runtime"]["image"]["id"]


def test_which_answers_inside_the_image(engine, tmp_path, fakelinux):
    rt, _ = _bound(engine, tmp_path, fakelinux)
    assert rt.which("make") == "/usr/bin/make"
    assert rt.which("depmod") is not None  # answered by the first probe
    assert rt.which("no-such-tool") is None


def test_image_without_the_cross_compiler_says_so(engine, tmp_path, fakelinux):
    build = Build(
        fakelinux,
        target_arch="arm64",
        toolchain="gcc",
        targets=["config"],
        runtime=engine,
        image="localhost/kbuild/x86_64_{toolchain}",
        output_dir=tmp_path / "out",
    )
    with pytest.raises(KbuildInfraError, match="aarch64-linux-gnu-gcc") as err:
        build.run()
    assert "the image localhost/kbuild/x86_64_gcc lacks it" in str(err.value)
    assert "gcc-aarch64-linux-gnu" in str(err.value)
