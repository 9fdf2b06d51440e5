import dataclasses
import hashlib
import json
import os
import platform
import shlex
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from fakes import FakeRuntime, goal_of, http_server, send, unwrap

from pytest_kbuild import definitions
from pytest_kbuild.build.build import Build
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.definitions.targets import default_targets
from pytest_kbuild.definitions.toolchain import Toolchain
from pytest_kbuild.errors import (
    KbuildError,
    KbuildInfraError,
    KbuildUserError,
    KconfigError,
    NotAKernelTree,
    ToolNotFound,
    UnknownArch,
    UnknownRuntime,
    UnknownTarget,
    UnknownToolchain,
    UnknownWrapper,
)
from pytest_kbuild.matrix.matrixfile import BuildSpec
from pytest_kbuild.results import BUILD_LOG, METADATA, Status
from pytest_kbuild.run import jobserver as jobservers
from pytest_kbuild.runtime.local import LocalRuntime

X86 = Arch.load("x86_64")


@pytest.fixture
def make_build(kernel_tree, fake_runtime, tmp_path):
    def make(**kwargs):
        kwargs.setdefault("target_arch", "x86_64")
        kwargs.setdefault("kconfig", "tinyconfig")
        kwargs.setdefault("runtime", fake_runtime)
        kwargs.setdefault("jobs", 3)
        kwargs.setdefault("output_dir", tmp_path / "out")
        kwargs.setdefault("build_dir", tmp_path / "build")
        return Build(kernel_tree, **kwargs)

    return make


def metadata(build):
    return json.loads((build.output_dir / METADATA).read_text())


def log_text(build):
    return (build.output_dir / BUILD_LOG).read_text()


# -- order, commands, artifacts ----------------------------------------------------------------


def test_targets_run_after_their_dependencies(make_build, fake_runtime, kernel_tree, tmp_path):
    b = make_build(targets=["kernel"])
    r = b.run()
    assert fake_runtime.goals == ["tinyconfig", "bzImage"]
    assert list(r.targets) == ["config", "kernel"]
    assert r.status is Status.PASS
    build = tmp_path / "build"
    vars_ = [f"{k}={v}" for k, v in b.makevars().items()]
    assert fake_runtime.calls[0].argv == [
        "make",
        "--silent",
        "--keep-going",
        "--jobs=3",
        f"O={build}",
        *vars_,
        "tinyconfig",
    ]
    assert [c.cwd for c in fake_runtime.calls] == [kernel_tree, kernel_tree]
    assert "ARCH=x86_64" in vars_
    assert [a.name for a in r["config"].artifacts] == ["config"]
    (image,) = r["kernel"].artifacts
    assert image.name == "bzImage"
    assert Path(image.path) == tmp_path / "out" / "bzImage"
    assert Path(image.path).read_text() == "bzImage output\n"
    assert image.sha256 == hashlib.sha256(b"bzImage output\n").hexdigest()


def test_run_with_explicit_targets(make_build, fake_runtime):
    b = make_build()
    r = b.run(["headers"])
    assert list(r.targets) == ["config", "headers"]
    assert fake_runtime.goals == ["tinyconfig", "rm", "headers_install", "tar"]


def test_make_runs_in_the_tree_and_other_tools_in_the_build_dir(
    make_build, fake_runtime, kernel_tree, tmp_path
):
    make_build(targets=["headers"], kconfig_add=["CONFIG_X=y"]).run()
    cwds = {c.goal: c.cwd for c in fake_runtime.calls}
    build = tmp_path / "build"
    assert cwds == {
        "tinyconfig": kernel_tree,
        "merge_config.sh": build,
        "olddefconfig": kernel_tree,
        "rm": build,
        "headers_install": kernel_tree,
        "tar": build,
    }
    merge = fake_runtime.calls[1].argv[0]
    assert merge == str(kernel_tree / "scripts/kconfig/merge_config.sh")


def test_default_targets_with_their_skips(make_build, fake_runtime):
    b = make_build()
    assert b.targets == default_targets()
    r = b.run()
    assert list(r.targets) == default_targets()
    statuses = {n: t.status for n, t in r.targets.items()}
    assert statuses == {
        "config": Status.PASS,
        "kernel": Status.PASS,
        "xipkernel": Status.SKIP,
        "debugkernel": Status.PASS,
        "modules": Status.SKIP,
        "dtbs": Status.SKIP,
        "headers": Status.PASS,
    }
    assert r.status is Status.PASS
    assert fake_runtime.goals == [
        "tinyconfig",
        "bzImage",
        "vmlinux",
        "xz",
        "rm",
        "headers_install",
        "tar",
    ]
    artifacts = sorted(a.name for t in r.targets.values() for a in t.artifacts)
    assert artifacts == sorted(["config", "bzImage", "vmlinux.xz", "System.map", "headers.tar.xz"])


def test_precondition_skip_reasons(make_build):
    r = make_build(targets=["modules", "dtbs", "xipkernel"]).run()
    assert r["modules"].reason == "modules needs CONFIG_MODULES=y, which the .config does not set"
    assert r["dtbs"].reason == "dtbs does not apply to arch x86_64 (arch data: no dtbs)"
    assert r["xipkernel"].reason == (
        "xipkernel does not apply to arch x86_64 (arch data: no xip_image)"
    )


def test_config_precondition_on_an_arch_with_dtbs(make_build):
    r = make_build(target_arch="arm64", targets=["dtbs"]).run()
    assert r["dtbs"].status is Status.SKIP
    assert r["dtbs"].reason == "dtbs needs CONFIG_OF=y, which the .config does not set"


def test_conflicting_config_skips(make_build, fake_runtime):
    fake_runtime.config["CONFIG_XIP_KERNEL"] = "y"
    r = make_build(targets=["kernel"]).run()
    assert r["kernel"].status is Status.SKIP
    assert r["kernel"].reason == "kernel does not apply: the .config sets CONFIG_XIP_KERNEL=y"
    assert fake_runtime.goals == ["tinyconfig"]


def test_modules_when_configured(make_build, fake_runtime, tmp_path):
    fake_runtime.config["CONFIG_MODULES"] = "y"
    r = make_build(targets=["modules"]).run()
    assert r["modules"].status is Status.PASS
    assert fake_runtime.goals == ["tinyconfig", "modules", "rm", "modules_install", "tar"]
    install = fake_runtime.calls[3].argv
    assert install[-3:] == [
        "modules_install",
        "INSTALL_MOD_STRIP=1",
        f"INSTALL_MOD_PATH={tmp_path / 'build'}/modinstall",
    ]
    assert [a.name for a in r["modules"].artifacts] == ["modules.tar.xz"]


def test_run_target_runs_once(make_build, fake_runtime):
    b = make_build()
    first = b.run_target("config")
    assert b.run_target("config") is first
    b.run_target("kernel")
    b.finish()
    assert fake_runtime.goals == ["tinyconfig", "bzImage"]


# -- failures ----------------------------------------------------------------------------


def test_failed_dependency_skips_naming_it(make_build, fake_runtime):
    fake_runtime.exit_codes["tinyconfig"] = 2
    r = make_build(targets=["kernel", "headers"]).run()
    assert r["config"].status is Status.FAIL
    assert r["config"].reason == "make tinyconfig failed"
    assert r["kernel"].status is Status.SKIP
    assert r["kernel"].reason == "dependency config did not pass"
    assert r["headers"].reason == "dependency config did not pass"
    assert fake_runtime.goals == ["tinyconfig"]
    assert r.status is Status.FAIL


def test_fail_with_errors_extracted(make_build, fake_runtime):
    fake_runtime.exit_codes["bzImage"] = 2
    fake_runtime.outputs["bzImage"] = (
        "  CC      init/main.o\n"
        "init/main.c:3:1: warning: unused variable 'y'\n"
        "init/main.c:12:3: error: 'x' undeclared\n"
        "make[3]: *** [scripts/Makefile.build:243: init/main.o] Error 1\n"
    )
    b = make_build(targets=["kernel", "headers"])
    r = b.run()
    k = r["kernel"]
    assert k.status is Status.FAIL
    assert k.reason == "make bzImage failed"
    assert k.errors == ["init/main.c:12:3: error: 'x' undeclared"]
    assert k.warnings == 1
    assert k.artifacts == []
    assert r["headers"].status is Status.PASS  # depends on config only
    log = (b.output_dir / BUILD_LOG).read_bytes()
    piece = log[k.log_start : k.log_end].decode()
    assert piece.startswith("$ make --silent")
    assert "init/main.c:12:3: error" in piece
    assert piece.endswith("E: exit status 2\n")
    assert log[: k.log_start].decode().endswith("# target kernel\n")


def test_fail_without_recognised_errors_uses_the_reason(make_build, fake_runtime):
    fake_runtime.exit_codes["bzImage"] = 1
    r = make_build(targets=["kernel"]).run()
    assert r["kernel"].errors == ["make bzImage failed"]


def test_missing_artifact_is_a_fail(make_build, fake_runtime):
    fake_runtime.no_artifacts.add("bzImage")
    r = make_build(targets=["kernel"]).run()
    k = r["kernel"]
    assert k.status is Status.FAIL
    assert k.reason == "kernel passed make but arch/x86/boot/bzImage was not produced"
    assert k.errors == [k.reason]
    assert not (r.output_dir / "bzImage").exists()


def test_no_config_produced(make_build, fake_runtime):
    fake_runtime.no_artifacts.add("tinyconfig")
    r = make_build(targets=["config"]).run()
    assert r["config"].status is Status.FAIL
    assert r["config"].reason == "no .config was produced"


def test_dropped_options_fail_config_naming_each(make_build, fake_runtime):
    fake_runtime.olddefconfig = {"CONFIG_FOO": None, "CONFIG_BAR": "y", "CONFIG_BAZ": "y"}
    b = make_build(
        targets=["kernel"],
        kconfig_add=["CONFIG_FOO=y", "CONFIG_BAR=m", "# CONFIG_BAZ is not set", "CONFIG_OK=y"],
    )
    r = b.run()
    lines = [
        "CONFIG_FOO=y was asked for, but the final .config is not set",
        "CONFIG_BAR=m was asked for, but the final .config is CONFIG_BAR=y",
        "CONFIG_BAZ not set was asked for, but the final .config is CONFIG_BAZ=y",
    ]
    c = r["config"]
    assert c.status is Status.FAIL
    assert c.reason == "; ".join(lines)
    assert c.errors == [c.reason]
    assert r["kernel"].reason == "dependency config did not pass"
    assert fake_runtime.goals == ["tinyconfig", "merge_config.sh", "olddefconfig"]
    log = log_text(b)
    assert "E: options asked for but missing from the final .config:\n" in log
    for line in lines:
        assert f"E:   {line}\n" in log
    assert "CONFIG_OK" not in c.reason


def test_interrupted_between_targets_is_interrupted_and_the_rest_skip(make_build):
    b = make_build(targets=["kernel", "headers"], build_dir=None)
    b.prepare()
    b.run_target("config")
    b.interrupted("terminated by SIGTERM")  # the signal came before kernel started
    b.finish()
    meta = metadata(b)
    assert meta["status"] == "INTERRUPTED"
    assert meta["targets"]["config"]["status"] == "PASS"
    for name in ("kernel", "headers"):
        assert meta["targets"][name] == {
            **meta["targets"][name],
            "status": "SKIP",
            "reason": "not run: the build was terminated by SIGTERM",
        }
    assert not b.build_dir.exists()


def test_a_new_build_removes_the_artifacts_an_earlier_one_left(make_build, fake_runtime):
    make_build(targets=["kernel"]).run()
    out = make_build().output_dir
    assert (out / "bzImage").is_file()
    (out / "unrelated.txt").write_text("mine")
    b = make_build(targets=["config"])
    b.run()
    assert not (out / "bzImage").exists(), "no stale image next to the new metadata"
    assert (out / "unrelated.txt").is_file(), "only what the earlier record named goes"
    assert set(metadata(b)["artifacts"]) == {"config"}
    assert "from the output dir: ['config', 'bzImage', 'reproducer.sh']" in log_text(b)


def test_a_config_that_fails_its_check_still_leaves_config(make_build, fake_runtime):
    fake_runtime.olddefconfig = {"CONFIG_FOO": None}
    b = make_build(targets=["config"], kconfig_add=["CONFIG_FOO=y"])
    assert b.run()["config"].status is Status.FAIL
    assert "# CONFIG_FOO is not set" in (b.output_dir / "config").read_text()
    meta = metadata(b)
    assert meta["artifacts"]["config"]["target"] == "config"
    assert meta["targets"]["config"]["artifacts"]


def test_a_failed_kernel_keeps_no_earlier_image(make_build, fake_runtime, tmp_path):
    # an incremental build dir holds an image from before: it is not this run's
    old = tmp_path / "build/arch/x86/boot/bzImage"
    old.parent.mkdir(parents=True)
    old.write_text("old image")
    os.utime(old, (1, 1))
    fake_runtime.exit_codes["bzImage"] = 2
    b = make_build(targets=["kernel"], incremental=True)
    assert b.run()["kernel"].status is Status.FAIL
    assert not (b.output_dir / "bzImage").exists()
    assert (b.output_dir / "config").is_file()


def test_kconfig_add_that_survives_passes(make_build, fake_runtime):
    b = make_build(targets=["config"], kconfig_add=["CONFIG_FOO=y", "# CONFIG_64BIT is not set"])
    r = b.run()
    assert r["config"].status is Status.PASS
    config = (b.output_dir / "config").read_text()
    assert "CONFIG_FOO=y\n" in config
    assert "# CONFIG_64BIT is not set\n" in config
    assert metadata(b)["kconfig_sources"] == [
        {"kconfig": "tinyconfig", "kind": "make target"},
        {"fragment": "CONFIG_FOO=y", "kind": "literal"},
        {"fragment": "# CONFIG_64BIT is not set", "kind": "literal"},
    ]


def test_arch_fragments_come_first_and_are_checked(make_build, fake_runtime):
    b = make_build(target_arch="mips64", targets=["config"], kconfig_add=["CONFIG_FOO=y"])
    r = b.run()
    assert r["config"].status is Status.PASS
    config = (b.output_dir / "config").read_text()
    assert "CONFIG_64BIT=y\n" in config and "CONFIG_CPU_MIPS64_R2=y\n" in config
    assert metadata(b)["kconfig_sources"] == [
        {"kconfig": "tinyconfig", "kind": "make target"},
        {"fragment": "CONFIG_64BIT=y", "kind": "literal"},
        {"fragment": "CONFIG_CPU_MIPS64_R2=y", "kind": "literal"},
        {"fragment": "CONFIG_FOO=y", "kind": "literal"},
    ]
    assert metadata(b)["kconfig_add"] == ["CONFIG_FOO=y"]  # the build's own, as asked


def test_arch_fragment_the_config_drops_fails_config(make_build, fake_runtime):
    # A 64-bit variant whose options do not hold must not pass as a 32-bit kernel.
    fake_runtime.olddefconfig = {"CONFIG_PPC64": None}
    r = make_build(target_arch="powerpc64", targets=["config"]).run()
    assert r["config"].status is Status.FAIL
    assert r["config"].reason == "CONFIG_PPC64=y was asked for, but the final .config is not set"


def test_build_fragment_overrides_the_arch_fragment(make_build, fake_runtime):
    b = make_build(
        target_arch="powerpc64le",
        targets=["config"],
        kconfig_add=["# CONFIG_CPU_LITTLE_ENDIAN is not set"],
    )
    assert b.run()["config"].status is Status.PASS
    assert "# CONFIG_CPU_LITTLE_ENDIAN is not set\n" in (b.output_dir / "config").read_text()


def test_kconfig_file_beside_the_matrix(make_build, fake_runtime, tmp_path):
    base = tmp_path / "matrices"
    base.mkdir()
    (base / "my.config").write_text("CONFIG_MINE=y\n")
    b = make_build(kconfig="my.config", kconfig_base_dir=base, targets=["config"])
    r = b.run()
    assert r["config"].status is Status.PASS
    assert fake_runtime.goals == ["olddefconfig"]
    assert metadata(b)["kconfig_sources"] == [
        {
            "kconfig": "my.config",
            "kind": "file",
            "sha256": hashlib.sha256(b"CONFIG_MINE=y\n").hexdigest(),
        }
    ]


def test_fail_fast(make_build, fake_runtime):
    fake_runtime.exit_codes["bzImage"] = 2
    r = make_build(targets=["kernel", "headers"], fail_fast=True).run()
    assert r["kernel"].status is Status.FAIL
    assert r["headers"].status is Status.SKIP
    assert r["headers"].reason == "fail-fast: an earlier target failed"
    assert all("--keep-going" not in c.argv for c in fake_runtime.calls)


def test_multi_command_target_stops_at_the_first_failure(make_build, fake_runtime):
    fake_runtime.exit_codes["headers_install"] = 2
    r = make_build(targets=["headers"]).run()
    assert r["headers"].reason == "make headers_install failed"
    assert fake_runtime.goals == ["tinyconfig", "rm", "headers_install"]


def test_no_space_left_is_an_infra_error(make_build, fake_runtime):
    fake_runtime.enospc.add("bzImage")
    b = make_build(targets=["kernel"])
    with pytest.raises(KbuildInfraError) as exc:
        b.run()
    assert str(exc.value) == "no space left on device while running make"
    assert b.result["kernel"].status is Status.ERROR
    assert b.result["kernel"].reason == str(exc.value)
    meta = metadata(b)
    assert meta["status"] == "ERROR"
    assert meta["targets"]["kernel"]["status"] == "ERROR"


def test_a_build_dir_that_cannot_be_made_is_an_infra_error_kept_in_metadata(make_build, tmp_path):
    (tmp_path / "blocker").write_text("a file where a directory should go")
    b = make_build(targets=["kernel"], wrapper="ccache", build_dir=tmp_path / "blocker" / "b")
    with pytest.raises(KbuildInfraError) as exc:
        b.run()
    assert str(exc.value) == f"cannot prepare the build dir {tmp_path}/blocker/b: Not a directory"
    meta = metadata(b)
    assert meta["status"] == "ERROR"
    assert meta["error"] == str(exc.value)
    assert f"E: {exc.value}\n" in log_text(b)


def test_an_output_dir_that_cannot_be_made_names_it(make_build, tmp_path):
    (tmp_path / "blocker").write_text("")
    b = make_build(targets=["kernel"], wrapper="ccache", output_dir=tmp_path / "blocker" / "out")
    with pytest.raises(KbuildInfraError) as exc:
        b.run()
    assert (
        str(exc.value) == f"cannot prepare the output dir {tmp_path}/blocker/out: Not a directory"
    )
    assert not (tmp_path / "blocker" / "out").exists()
    b.finish()  # nothing to write, and no error hiding the real one


def test_kconfig_fetch_failure_is_an_infra_error(make_build):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x.config"
    b = make_build(kconfig=url, targets=["config"])
    with pytest.raises(KbuildInfraError, match=r"^cannot fetch kconfig 'http://127\.0\.0\.1:"):
        b.run()
    assert b.result["config"].status is Status.ERROR
    assert metadata(b)["status"] == "ERROR"


def test_kconfig_url_redirect_is_in_metadata_and_build_log(make_build, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    routes = {
        "/moved.config": lambda h: send(h, b"", 301, Location="/x.config"),
        "/x.config": lambda h: send(h, b"CONFIG_FROM_URL=y\n"),
    }
    with http_server(routes) as server:
        b = make_build(kconfig=f"{server}/moved.config", targets=["config"])
        assert b.run()["config"].status is Status.PASS
    source = metadata(b)["kconfig_sources"][0]
    assert (source["kind"], source["final_url"]) == ("url", f"{server}/x.config")
    assert f"I: kconfig {server}/moved.config fetched from {server}/x.config\n" in log_text(b)


def test_kconfig_url_serving_html_is_an_error_not_a_kernel_failure(make_build, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    page = b"<!DOCTYPE html>\n<html><body>Please sign in</body></html>\n"
    with http_server({"/x.config": lambda h: send(h, page)}) as server:
        b = make_build(kconfig=f"{server}/x.config", targets=["config"])
        with pytest.raises(KbuildInfraError, match="got an HTML page"):
            b.run()
    assert b.result["config"].status is Status.ERROR
    assert "starts with '<!DOCTYPE html>'" in b.result["config"].reason
    assert "E: cannot fetch kconfig" in log_text(b)
    assert metadata(b)["status"] == "ERROR"


def test_missing_kconfig_file_is_an_error_of_config(make_build):
    b = make_build(kconfig="missing/my.config", targets=["kernel"])
    with pytest.raises(KconfigError) as exc:
        b.run()
    assert str(exc.value).startswith("kconfig 'missing/my.config': no such file (looked in ")
    assert b.result["config"].status is Status.ERROR
    assert b.result["config"].reason == str(exc.value)
    assert "kernel" not in b.result.targets
    assert f"E: {exc.value}\n" in log_text(b)
    meta = metadata(b)
    assert meta["status"] == "ERROR"
    assert meta["targets"]["config"]["status"] == "ERROR"


# -- metadata.json -------------------------------------------------------------------------


def test_metadata_written_at_start(make_build, kernel_tree, tmp_path):
    b = make_build(targets=["kernel"], kconfig_add=["CONFIG_X=y"], environment={"E": "1"})
    b.prepare()
    meta = metadata(b)
    compiler = Toolchain.load("gcc").compiler(X86)
    assert meta["schema"] == 1
    assert meta["build_id"] == "x86_64-gcc-tinyconfig"
    assert meta["status"] == "running"
    assert meta["finished"] is None
    assert meta["arch"] == "x86_64"
    assert meta["toolchain"] == {
        "name": "gcc",
        "compiler": compiler,
        "path": None,  # not a toolchain from a directory
        "version": f"{compiler} (Fake 1.0) 1.0.0",
        "version_number": "1.0",
        "minimum_version": None,
    }
    assert meta["kconfig"] == "tinyconfig"
    assert meta["kconfig_add"] == ["CONFIG_X=y"]
    assert meta["env"] == {"E": "1"}
    assert meta["makevars"] == b.makevars()
    assert meta["runtime"] == {"name": "fake"}
    assert meta["jobs"] == 3
    assert meta["targets_requested"] == ["kernel"]
    assert meta["targets"] == {}
    assert meta["artifacts"] == {}
    assert meta["build_dir"] == str(tmp_path / "build")
    assert meta["tree"] == {
        "path": str(kernel_tree),
        "kernelversion": "6.8.0-rc3",
        "git": dict.fromkeys(["commit", "describe", "describe_tags", "branch", "remote_url"]),
    }
    assert meta["tools"] == {
        "make": "make (Fake 1.0) 1.0.0",
        "compiler": f"{compiler} (Fake 1.0) 1.0.0",
        "ld": "ld (Fake 1.0) 1.0.0",
        **{t: f"{t} (Fake 1.0) 1.0.0" for t in ("bc", "bison", "flex", "gzip")},
    }
    assert meta["host"]["machine"] == platform.machine()
    assert meta["reproducer"] == b.reproducer()
    assert meta["wrapper"] == {"name": "none", "cache_dir": None}
    b.finish()


def keys(value, prefix=""):
    """Every key path of a JSON value's dicts (not of per-target or artifact entries)."""
    if not isinstance(value, dict) or prefix in ("targets", "artifacts"):
        return {prefix}
    out = {prefix}
    for k, v in value.items():
        out |= keys(v, f"{prefix}.{k}" if prefix else k)
    return out


def test_every_key_is_in_the_record_of_a_pass_a_fail_and_an_error(
    make_build, fake_runtime, tmp_path
):
    passed = make_build(targets=["kernel"], output_dir=tmp_path / "pass")
    assert passed.run().status is Status.PASS
    fake_runtime.exit_codes["bzImage"] = 2
    failed = make_build(targets=["kernel"], output_dir=tmp_path / "fail")
    assert failed.run().status is Status.FAIL
    fake_runtime.missing.add(Toolchain.load("gcc").compiler(X86))
    errored = make_build(targets=["kernel"], output_dir=tmp_path / "error")
    with pytest.raises(ToolNotFound):
        errored.run()
    metas = [metadata(b) for b in (passed, failed, errored)]
    assert [m["status"] for m in metas] == ["PASS", "FAIL", "ERROR"]
    assert keys(metas[0]) == keys(metas[1]) == keys(metas[2])
    for key in ("kernelrelease", "tools", "vmlinux", "hardware", "modules", "totals"):
        assert key in metas[2]
    assert metas[0]["pytest_kbuild_version"] == metas[2]["pytest_kbuild_version"]


def test_the_record_of_what_was_built(make_build, fake_runtime):
    def made(call):
        if call.goal == "bzImage":
            build = call.cwd if call.argv[0] != "make" else Path(b.build_dir)
            (build / "include/config").mkdir(parents=True, exist_ok=True)
            (build / "include/config/kernel.release").write_text("6.8.0-rc3\n")
            (build / "vmlinux").write_text("elf")
            (build / "System.map").write_text(
                "ffffffff81000000 T _stext\nffffffff81000000 T _text\n"
            )
            (build / "modules.order").write_text("fs/ext4/ext4.ko\ncrypto/crc32c.ko\n")

    fake_runtime.on_run = made
    fake_runtime.outputs["bzImage"] = "kernel/fork.c:1:1: warning: unused [-Wunused]\n"
    fake_runtime.capture_outputs["size vmlinux"] = (
        0,
        "   text\t   data\t    bss\t    dec\t    hex\tfilename\n"
        "1057052\t 338844\t1396736\t2792632\t 2a9cb8\tvmlinux\n",
    )
    b = make_build(targets=["kernel"])
    b.run()
    meta = metadata(b)
    assert meta["kernelrelease"] == "6.8.0-rc3"
    assert meta["vmlinux"] == {
        "text": 1057052,
        "data": 338844,
        "bss": 1396736,
        "text_offset": "0xffffffff81000000",
    }
    assert meta["modules"] == ["fs/ext4/ext4", "crypto/crc32c"]
    assert meta["totals"] == {"errors": 0, "warnings": 1}
    assert meta["hardware"]["cores"] >= 1 and meta["hardware"]["ram_bytes"] > 0
    assert meta["hardware"]["build_dir_free_bytes"] > 0


def test_a_plan_builds_kernel_image_is_in_its_reproducer(kernel_tree, fake_runtime, tmp_path):
    from pytest_kbuild import matrix

    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "version: 1\njobs:\n- name: one\n  builds:\n"
        "  - {target_arch: x86_64, toolchain: gcc, kconfig: tinyconfig, kernel_image: vmlinux}\n"
        "  - {target_arch: x86_64, toolchain: gcc, kconfig: defconfig}\n"
    )
    got = {b.kconfig: b for b in matrix.load(plan, check=False).builds}
    with_image, without = got["tinyconfig"], got["defconfig"]
    assert (with_image.kernel_image, without.kernel_image) == ("vmlinux", "")

    def build(spec, **options):
        return Build(kernel_tree, spec, runtime=fake_runtime, output_dir=tmp_path / "o", **options)

    b = build(with_image)
    assert "--kernel-image=vmlinux" in shlex.split(b.reproducer())
    assert b.arch.kernel_image == "vmlinux"
    assert "--kernel-image" not in build(without).reproducer()
    # the plan's image wins over the run's, in the build and in its reproducer
    b = build(with_image, kernel_image="bzImage")
    assert "--kernel-image=vmlinux" in shlex.split(b.reproducer())
    assert "--kernel-image=bzImage" not in b.reproducer()
    assert b.arch.kernel_image == "vmlinux"


def test_m68k_gzips_without_name_and_mtime_unless_the_user_says(make_build):
    assert make_build(target_arch="m68k").makevars()["KGZIP"] == "gzip -n"
    mine = make_build(target_arch="m68k", make_variables={"KGZIP": "pigz"})
    assert mine.makevars()["KGZIP"] == "pigz"
    assert "KGZIP" not in make_build(target_arch="m68k", reproducible=False).makevars()
    assert "KGZIP" not in make_build().makevars()


def test_a_config_only_build_asks_make_for_its_kernelrelease(make_build, fake_runtime):
    fake_runtime.capture_outputs["make"] = (0, "6.1.0-tiny\n")
    b = make_build(targets=["config"], make_variables={"LOCALVERSION": "-tiny"})
    assert b.run().status is Status.PASS
    assert metadata(b)["kernelrelease"] == "6.1.0-tiny"
    [asked] = [c for c in fake_runtime.captures if c[-1] == "kernelrelease"]
    assert asked[-2:] == ["-s", "kernelrelease"]
    assert f"O={b.build_dir}" in asked and "ARCH=x86_64" in asked and "LOCALVERSION=-tiny" in asked


def test_a_kernel_build_reads_kernel_release_and_does_not_ask_make(make_build, fake_runtime):
    def made(call):
        if call.goal == "bzImage":
            (Path(b.build_dir) / "include/config").mkdir(parents=True, exist_ok=True)
            (Path(b.build_dir) / "include/config/kernel.release").write_text("6.1.0-k\n")

    fake_runtime.on_run = made
    b = make_build(targets=["kernel"])
    b.run()
    assert metadata(b)["kernelrelease"] == "6.1.0-k"
    assert [c for c in fake_runtime.captures if c[-1] == "kernelrelease"] == []


def test_an_incremental_dirs_vmlinux_counts_only_when_a_linking_target_passed(
    make_build, fake_runtime, tmp_path
):
    build = tmp_path / "build"
    build.mkdir()
    for name in ("vmlinux", "System.map"):
        (build / name).write_text("ffffffff81000000 T _text\n")
        os.utime(build / name, (1, 1))  # from an earlier run
    fake_runtime.capture_outputs["size vmlinux"] = (0, "t d b\n 1\t 2\t 3\t 6\t 6\tvmlinux\n")
    b = make_build(targets=["config"], incremental=True)
    b.run()
    assert metadata(b)["vmlinux"] == dict.fromkeys(["text", "data", "bss", "text_offset"])
    b = make_build(targets=["kernel"], incremental=True)
    b.run()
    assert metadata(b)["vmlinux"] == {
        "text": 1,
        "data": 2,
        "bss": 3,
        "text_offset": "0xffffffff81000000",
    }


def test_build_log_starts_with_the_reproducer_and_the_compiler(make_build, fake_runtime):
    fake_runtime.capture_outputs["gcc --version"] = (0, "gcc (Debian 12.2.0-14) 12.2.0\nCopy\n")
    fake_runtime.exit_codes["tinyconfig"] = 2
    b = make_build(targets=["config"])
    b.run()
    first = log_text(b).splitlines()[:2]
    assert first == [
        f"# to reproduce this build: {b.reproducer()}",
        "# compiler: gcc (Debian 12.2.0-14) 12.2.0",
    ]
    script = b.output_dir / "reproducer.sh"
    assert os.access(script, os.X_OK)
    lines = script.read_text().splitlines()
    assert lines[0] == "#!/bin/sh" and lines[-1] == f"exec {b.reproducer()}"
    assert shlex.split(lines[-1])[1:] == shlex.split(b.reproducer())


def test_a_build_without_a_compiler_still_says_so_first(make_build, fake_runtime):
    fake_runtime.missing.add("gcc")
    fake_runtime.capture_outputs["gcc --version"] = (127, "sh: gcc: not found\n")
    b = make_build(targets=["config"])
    with pytest.raises(ToolNotFound):
        b.run()
    lines = log_text(b).splitlines()
    assert lines[1] == "# compiler: unknown" and lines[2].startswith("E: ")


def test_metadata_rewritten_after_each_target_and_at_the_end(make_build, fake_runtime):
    b = make_build(targets=["kernel"])
    seen = {}
    fake_runtime.on_run = lambda call: seen.setdefault(call.goal, metadata(b))
    b.record.matrix = {"path": "m.yaml"}
    r = b.run()
    assert seen["tinyconfig"]["targets"] == {}
    mid = seen["bzImage"]
    assert mid["status"] == "running"
    assert mid["targets"]["config"]["status"] == "PASS"
    assert "kernel" not in mid["targets"]
    meta = metadata(b)
    assert meta["status"] == "PASS"
    assert meta["finished"] >= meta["started"]
    assert meta["matrix"] == {"path": "m.yaml"}
    assert meta["targets"]["kernel"] == r["kernel"].to_json()
    image = r["kernel"].artifacts[0]
    assert meta["artifacts"]["bzImage"] == {
        "size": image.size,
        "sha256": image.sha256,
        "target": "kernel",
    }
    assert set(meta["artifacts"]) == {"config", "bzImage"}


def test_keyboard_interrupt_marks_the_build_interrupted(make_build, fake_runtime):
    fake_runtime.interrupt.add("bzImage")
    b = make_build(targets=["kernel", "headers"], build_dir=None)
    with pytest.raises(KeyboardInterrupt):
        b.run()
    assert b.result.status is Status.INTERRUPTED
    assert b.result["kernel"].reason == "interrupted (Ctrl-C)"
    assert b.result["headers"].status is Status.SKIP
    assert b.result["headers"].reason == "not run: the build was interrupted (Ctrl-C)"
    meta = metadata(b)
    assert meta["targets"]["headers"]["status"] == "SKIP"
    assert meta["status"] == "INTERRUPTED"
    assert meta["targets"]["config"]["status"] == "PASS"
    assert meta["targets"]["kernel"]["status"] == "INTERRUPTED"
    assert "finished" in meta
    assert not b.build_dir.exists(), "the temporary build directory is removed"


def test_compiler_version_unknown(make_build, fake_runtime):
    compiler = Toolchain.load("gcc").compiler(X86)
    fake_runtime.capture_outputs[f"{compiler} --version"] = (127, "")
    b = make_build()
    b.prepare()
    assert metadata(b)["toolchain"]["version"] is None
    b.finish()


# -- tools --------------------------------------------------------------------------------


def test_missing_compiler_is_tool_not_found_with_debian_hint(make_build, fake_runtime):
    arch = Arch.load("arm64")
    t = Toolchain.load("gcc-12")
    compiler = t.compiler(arch)
    pkgs = t.debian_packages(arch)
    fake_runtime.missing.add(compiler)
    b = make_build(target_arch="arm64", toolchain="gcc-12")
    with pytest.raises(ToolNotFound) as exc:
        b.prepare()
    assert str(exc.value) == (
        f"toolchain gcc-12 for arm64 (runtime fake): {compiler!r} not found on PATH; "
        f"on Debian install: {' '.join(pkgs)}"
    )
    assert exc.value.tool == compiler
    assert isinstance(exc.value, KbuildInfraError)
    if not arch.is_native():
        assert "gcc-12-aarch64-linux-gnu" in str(exc.value)
    assert metadata(b)["status"] == "running"  # the first metadata.json is already there
    b.finish()
    assert (
        f"E: toolchain gcc-12 for arm64 (runtime fake): {compiler!r} not found on PATH"
        in log_text(b)
    )


def test_missing_make(make_build, fake_runtime):
    fake_runtime.missing.add("make")
    b = make_build()
    with pytest.raises(ToolNotFound) as exc:
        b.prepare()
    b.finish()
    assert str(exc.value) == (
        "GNU make (runtime fake): 'make' not found on PATH; on Debian install: make"
    )


def test_missing_wrapper(make_build, fake_runtime):
    fake_runtime.missing.add("ccache")
    b = make_build(wrapper="ccache")
    with pytest.raises(ToolNotFound) as exc:
        b.prepare()
    b.finish()
    assert str(exc.value) == (
        "wrapper ccache (runtime fake): 'ccache' not found on PATH; on Debian install: ccache"
    )


def test_missing_arch_host_tool(make_build, fake_runtime):
    b = make_build()
    b.arch = dataclasses.replace(b.arch, host_tools={"mkimage": "u-boot-tools"})
    fake_runtime.missing.add("mkimage")
    with pytest.raises(ToolNotFound) as exc:
        b.prepare()
    assert str(exc.value) == (
        "arch x86_64 (runtime fake): 'mkimage' not found on PATH; on Debian install: u-boot-tools"
    )
    assert exc.value.tool == "mkimage"
    b.finish()


@pytest.mark.parametrize(
    "arch", [a for a in definitions.available("arch") if Arch.load(a).host_tools]
)
def test_host_tools_of_arch_files_are_checked(make_build, fake_runtime, arch):
    tools = Arch.load(arch).host_tools
    tool = sorted(tools)[0]
    fake_runtime.missing.add(tool)
    b = make_build(target_arch=arch)
    with pytest.raises(ToolNotFound, match=f"on Debian install: {tools[tool]}$"):
        b.prepare()
    b.finish()


def test_missing_compiler_is_remembered(make_build, fake_runtime):
    fake_runtime.missing.add(Toolchain.load("gcc").compiler(X86))
    b = make_build(targets=["kernel"])
    with pytest.raises(ToolNotFound) as first:
        b.prepare()
    with pytest.raises(ToolNotFound) as again:
        b.run_target("kernel")  # items.py calls this for the next target of the build
    assert again.value is first.value
    assert fake_runtime.calls == []
    b.finish()
    meta = metadata(b)
    assert meta["status"] == "ERROR"
    assert meta["error"] == str(first.value)


def test_missing_rsync_is_an_error_of_headers_alone(make_build):
    rt = FakeRuntime(missing={"rsync"})
    b = make_build(runtime=rt, targets=["config", "kernel", "headers"])
    result = b.run()
    message = "target headers (runtime fake): 'rsync' not found on PATH; on Debian install: rsync"
    assert {n: r.status for n, r in result.targets.items()} == {
        "config": Status.PASS,
        "kernel": Status.PASS,
        "headers": Status.ERROR,
    }
    assert result["headers"].reason == message
    assert "headers_install" not in rt.goals  # found before make runs
    assert "tar" not in rt.goals
    assert result.status is Status.ERROR
    assert f"E: {message}\n" in log_text(b)
    meta = metadata(b)
    assert meta["status"] == "ERROR"
    assert meta["targets"]["headers"]["status"] == "ERROR"
    assert meta["targets"]["kernel"]["status"] == "PASS"


def test_missing_tool_of_an_earlier_target_does_not_stop_later_ones(make_build):
    rt = FakeRuntime(missing={"bc"})  # kernel and debugkernel need it, headers not
    result = make_build(runtime=rt, targets=["kernel", "debugkernel", "headers"]).run()
    assert {n: r.status for n, r in result.targets.items()} == {
        "config": Status.PASS,
        "kernel": Status.ERROR,
        "debugkernel": Status.ERROR,
        "headers": Status.PASS,
    }
    assert result["debugkernel"].reason == (
        "target debugkernel (runtime fake): 'bc' not found on PATH; on Debian install: bc"
    )
    assert "headers_install" in rt.goals and "bzImage" not in rt.goals


def test_compression_tool_is_needed_only_when_the_config_selects_it(make_build):
    rt = FakeRuntime(missing={"lzop"})
    assert make_build(runtime=rt, targets=["kernel"]).run()["kernel"].status is Status.PASS
    rt = FakeRuntime(missing={"lzop"}, config={"CONFIG_64BIT": "y", "CONFIG_KERNEL_LZO": "y"})
    b = make_build(runtime=rt, targets=["kernel"])
    kernel = b.run()["kernel"]
    assert kernel.status is Status.ERROR
    assert kernel.reason == (
        "target kernel, for CONFIG_KERNEL_LZO=y in the .config (runtime fake): "
        "'lzop' not found on PATH; on Debian install: lzop"
    )
    assert "bzImage" not in rt.goals


def test_a_skipped_target_needs_no_tools(make_build):
    rt = FakeRuntime(missing={"depmod", "bison"})  # modules: CONFIG_MODULES is not set
    b = make_build(runtime=rt, targets=["config", "modules"])
    b.run_target("config")
    assert b.check_target_tools("modules") is None
    result = b.run(["modules"])
    assert result["config"].status is Status.ERROR  # bison
    assert result["modules"].status is Status.SKIP
    assert result["modules"].reason == "dependency config did not pass"
    rt = FakeRuntime(missing={"depmod"})
    modules = make_build(runtime=rt, targets=["modules"]).run()["modules"]
    assert modules.status is Status.SKIP and "CONFIG_MODULES=y" in modules.reason


def test_check_target_tools_records_once_and_run_target_returns_it(make_build):
    rt = FakeRuntime(missing={"rsync"})
    b = make_build(runtime=rt, targets=["headers"])
    b.run_target("config")
    first = b.check_target_tools("headers")  # items.py calls this in the item's setup
    assert first is not None and first.status is Status.ERROR
    assert b.check_target_tools("headers") is first
    assert b.run_target("headers") is first
    assert b.check_target_tools("config") is None  # passed: nothing to report
    b.finish()
    assert log_text(b).count("'rsync' not found on PATH") == 1


# -- variables, environment, wrapper ------------------------------------------------------


def test_user_make_variables_come_last_and_win(make_build, fake_runtime):
    b = make_build(targets=["config"], make_variables={"CC": "mycc", "W": "1"})
    b.run()
    argv = fake_runtime.calls[0].argv
    assert "CC=mycc" in argv
    assert [a for a in argv if a.startswith("CC=")] == ["CC=mycc"]
    assert argv[-2:] == ["W=1", "tinyconfig"]


def test_a_users_cross_compile_reaches_cc_and_the_record(make_build, fake_runtime):
    b = make_build(
        target_arch="arm64", targets=["config"], make_variables={"CROSS_COMPILE": "/tc/a64-"}
    )
    b.run()
    argv = fake_runtime.calls[0].argv
    assert "CROSS_COMPILE=/tc/a64-" in argv and "CC=/tc/a64-gcc" in argv
    assert [a for a in argv if a.startswith("CROSS_COMPILE=")] == ["CROSS_COMPILE=/tc/a64-"]
    assert metadata(b)["toolchain"]["compiler"] == "/tc/a64-gcc"
    assert ["/tc/a64-gcc", "--version"] in fake_runtime.captures


def test_verbose_drops_silent(make_build, fake_runtime):
    make_build(targets=["config"], verbose=True).run()
    assert "--silent" not in fake_runtime.calls[0].argv
    make_build(targets=["config"]).run()
    assert "--silent" in fake_runtime.calls[-1].argv


def test_kernel_image_option_builds_and_keeps_that_image(make_build, fake_runtime):
    fake_runtime.produces["Image.bz2"] = ["arch/x86/boot/Image.bz2"]
    b = make_build(targets=["kernel"], kernel_image="Image.bz2")
    assert b.run().status is Status.PASS
    assert fake_runtime.goals[-1] == "Image.bz2"
    assert set(metadata(b)["artifacts"]) == {"config", "Image.bz2"}
    assert "--kernel-image=Image.bz2" in b.reproducer()


def test_compression_zstd_needs_zstd_and_names_the_artifacts(make_build, fake_runtime):
    fake_runtime.produces["vmlinux"] = ["vmlinux", "System.map", "vmlinux.zst"]
    b = make_build(targets=["debugkernel"], compression="zstd")
    assert b.run()["debugkernel"].status is Status.PASS
    assert set(metadata(b)["artifacts"]) == {"config", "vmlinux.zst", "System.map"}
    assert ["zstd", "-q", "--keep", "--force", f"{b.build_dir}/vmlinux"] in [
        c.argv for c in fake_runtime.calls
    ]
    assert "--compression=zstd" in b.reproducer()
    fake_runtime.missing.add("zstd")
    r = make_build(targets=["debugkernel"], compression="zstd").run()
    assert r["debugkernel"].status is Status.ERROR
    assert "'zstd' not found on PATH; on Debian install: zstd" in r["debugkernel"].reason
    assert make_build(targets=["kernel"], compression="zstd").run().status is Status.PASS


def test_environment_reaches_every_command(make_build, fake_runtime):
    make_build(targets=["headers"], environment={"KBUILD_BUILD_USER": "ci"}).run()
    assert all(c.env["KBUILD_BUILD_USER"] == "ci" for c in fake_runtime.calls)


def test_ccache_wrapper(make_build, fake_runtime, tmp_path):
    fake_runtime.capture_outputs["ccache --show-log-stats -v"] = (0, "Hits: 3\n")
    b = make_build(targets=["config"], wrapper="ccache", cache_dir=tmp_path / "cc")
    b.run()
    env = fake_runtime.calls[0].env
    assert env["CCACHE_DIR"] == str(tmp_path / "cc")
    assert env["CCACHE_STATSLOG"] == f"{tmp_path / 'build'}/ccache-stats.log"
    assert env["CCACHE_NOHASHDIR"] == "1" and env["CCACHE_COMPILERCHECK"] == "content"
    assert "CCACHE_REMOTE_STORAGE" not in env
    assert b.makevars()["CC"].startswith("ccache ")
    meta = metadata(b)
    no_log = {"hits": 0, "misses": 0, "local_hits": 0, "remote_hits": 0, "remote_errors": 0}
    assert meta["wrapper"] == {
        "name": "ccache",
        "cache_dir": str(tmp_path / "cc"),
        "stats": "Hits: 3",
        "counts": no_log,
    }


STATSLOG = """\
# /src/init/main.c
direct_cache_hit
local_storage_hit
local_storage_read_hit
# /src/kernel/fork.c
direct_cache_hit
local_storage_miss
remote_storage_hit
remote_storage_read_hit
# /src/kernel/exit.c
cache_miss
local_storage_miss
remote_storage_miss
remote_storage_write
"""


def test_ccache_counts_per_target_and_per_build(make_build, fake_runtime, tmp_path):
    # The fake "compiles" by appending to the stats log, as ccache does.
    log = tmp_path / "build" / "ccache-stats.log"

    def compile_some(call):
        if call.goal == "bzImage":
            with open(call.env["CCACHE_STATSLOG"], "a") as f:
                f.write(STATSLOG)

    fake_runtime.on_run = compile_some
    b = make_build(targets=["config", "kernel"], wrapper="ccache")
    b.run()
    assert log.is_file()
    figures = {"hits": 2, "misses": 1, "local_hits": 1, "remote_hits": 1, "remote_errors": 0}
    assert b.result["config"].cache == dict.fromkeys(figures, 0)
    assert b.result["kernel"].cache == figures
    meta = metadata(b)
    assert meta["targets"]["kernel"]["cache"] == figures
    assert meta["wrapper"]["counts"] == figures


def test_cache_remote_reaches_the_wrapper_and_is_redacted(make_build, fake_runtime):
    url = "redis://:secret@cache.invalid:6379"
    b = make_build(targets=["config"], wrapper="ccache", cache_remote=url)
    b.run()
    assert fake_runtime.calls[0].env["CCACHE_REMOTE_STORAGE"] == url
    assert metadata(b)["wrapper"]["remote"] == "redis://:***@cache.invalid:6379"
    assert "secret" not in (b.output_dir / "metadata.json").read_text()


def test_build_env_wins_over_wrapper_tuning_only(make_build, fake_runtime, tmp_path):
    env = {"CCACHE_BASEDIR": "/src", "CCACHE_COMPILERCHECK": "mtime", "CCACHE_DIR": "/mine"}
    b = make_build(targets=["config"], wrapper="ccache", environment=env, cache_dir=tmp_path)
    b.run()
    got = fake_runtime.calls[0].env
    assert got["CCACHE_BASEDIR"] == "/src" and got["CCACHE_COMPILERCHECK"] == "mtime"
    assert got["CCACHE_NOHASHDIR"] == "1"
    assert got["CCACHE_DIR"] == str(tmp_path)  # --kbuild-cache-dir wins


@pytest.mark.parametrize(
    ("wrapper", "url", "message"),
    [
        (
            "ccache",
            "s3://bucket",
            "cache remote: 's3://bucket' is not a remote storage URL wrapper ccache accepts; "
            "accepted schemes: redis, redis+unix, http, file",
        ),
        (
            "sccache",
            "http://h:p@cache.invalid",
            "cache remote: 'http://h:***@cache.invalid' is not a remote storage URL wrapper "
            "sccache accepts; accepted schemes: redis, rediss",
        ),
    ],
)
def test_bad_cache_remote(make_build, wrapper, url, message):
    with pytest.raises(KbuildUserError) as exc:
        make_build(wrapper=wrapper, cache_remote=url)
    assert str(exc.value) == message


def test_cache_remote_without_a_wrapper_is_unused(make_build, fake_runtime):
    b = make_build(targets=["config"], cache_remote="redis://127.0.0.1:1")
    b.run()
    assert not any("REDIS" in k or "REMOTE" in k for k in fake_runtime.calls[0].env)


# -- directories ------------------------------------------------------------------------------


def test_given_build_dir_is_emptied_and_kept(make_build, tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "stale.o").write_text("")
    b = make_build(targets=["config"])
    b.run()
    assert not (tmp_path / "build" / "stale.o").exists()
    assert (tmp_path / "build" / ".config").is_file()


def test_temporary_build_dir_removed_unless_kept(make_build):
    b = make_build(targets=["config"], build_dir=None)
    b.run()
    assert not b.build_dir.exists()
    b = make_build(targets=["config"], build_dir=None, keep_build_dir=True)
    b.run()
    try:
        assert (b.build_dir / ".config").is_file()
    finally:
        shutil.rmtree(b.build_dir)


def test_default_output_dir(kernel_tree, fake_runtime, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    b = Build(kernel_tree, target_arch="amd64", toolchain="clang-16", runtime=fake_runtime)
    assert b.id == "x86_64-clang-16-defconfig"
    assert b.output_dir == tmp_path / "kbuild-results" / "x86_64-clang-16-defconfig"
    assert b.spec.base_dir == tmp_path


def test_build_dir_equal_to_the_tree_is_refused(make_build, kernel_tree):
    try:
        b = make_build(build_dir=kernel_tree)
    except KbuildUserError:
        return
    try:
        b.prepare()
    except KbuildUserError:
        pass
    finally:
        b.finish()
    assert (kernel_tree / "Makefile").is_file(), "the kernel tree was deleted"


# -- construction errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc_type", "message"),
    [
        ({"target_arch": "vax"}, UnknownArch, "target arch: unknown arch 'vax'; known: "),
        (
            {"toolchain": "gcc-99"},
            UnknownToolchain,
            "toolchain: unknown toolchain 'gcc-99'; known: ",
        ),
        ({"wrapper": "distcc"}, UnknownWrapper, "wrapper: unknown wrapper 'distcc'; known: "),
        ({"targets": ["bzImage"]}, UnknownTarget, "targets: unknown target 'bzImage'; known: "),
        (
            {"runtime": "no-such-runtime"},
            UnknownRuntime,
            "runtime: unknown runtime 'no-such-runtime'; known: ",
        ),
        (
            {"kconfig_add": ["CONFIG_X=maybe"]},
            KconfigError,
            "kconfig 'CONFIG_X=maybe': not a valid option; accepted: ",
        ),
        (
            {"make_variables": {"O": "/tmp/x"}},
            KbuildUserError,
            "make variable O cannot be set: the build directory is set by pytest-kbuild",
        ),
    ],
)
def test_bad_input_messages(make_build, kwargs, exc_type, message):
    with pytest.raises(exc_type) as exc:
        make_build(**kwargs)
    assert str(exc.value).startswith(message)
    assert isinstance(exc.value, KbuildUserError)


def test_make_variable_arch_is_refused(make_build):
    with pytest.raises(KbuildUserError, match="ARCH"):
        make_build(make_variables={"ARCH": "arm64"})


def test_not_a_kernel_tree(tmp_path, fake_runtime):
    (tmp_path / "src").mkdir()
    with pytest.raises(NotAKernelTree) as exc:
        Build(tmp_path / "src", target_arch="x86_64", runtime=fake_runtime)
    assert str(exc.value) == (
        f"tree: {str(tmp_path / 'src')!r} is not a kernel tree: missing Makefile, Kconfig, "
        "Kbuild (a tree has Makefile, Kconfig and Kbuild at its top)"
    )


# -- reproducer -------------------------------------------------------------------------------


def test_reproducer(make_build, kernel_tree):
    # The tree is no git tree: the timestamp reproducible mode took from its
    # Makefile goes along (a copy of the tree may have another mtime).
    os.utime(kernel_tree / "Makefile", (1_700_000_000, 1_700_000_000))
    b = make_build(
        toolchain="clang-16",
        kconfig_add=["CONFIG_X=y", "# CONFIG_Y is not set"],
        wrapper="ccache",
        environment={"B": "2", "A": "1 2"},
        make_variables={"KCFLAGS": "-O2 -g"},
        targets=["config", "kernel"],
    )
    argv = [
        "kbuild",
        f"--directory={kernel_tree}",
        "--target-arch=x86_64",
        "--toolchain=clang-16",
        "--kconfig=tinyconfig",
        "--kconfig-add=CONFIG_X=y",
        "--kconfig-add=# CONFIG_Y is not set",
        "--wrapper=ccache",
        "--runtime=fake",
        "--environment=A=1 2",
        "--environment=B=2",
        "--environment=KBUILD_BUILD_TIMESTAMP=Tue Nov 14 22:13:20 UTC 2023",
        "KCFLAGS=-O2 -g",
        "config",
        "kernel",
    ]
    assert b.reproducer() == shlex.join(argv)
    assert shlex.split(b.reproducer()) == argv


# Shell metacharacters in make variable values: pytest-kbuild hands them to
# make as they are, one argv element each, and never through a shell of its own.
HOSTILE = [
    "$(shell touch {s})",
    "$(touch {s})",
    "a; touch {s}",
    "`touch {s}`",
    "x && touch {s} || touch {s}",
    'it\'s "quoted" $HOME * > {s}',
]


def test_make_variable_values_reach_make_as_one_argument_each(make_build, fake_runtime, tmp_path):
    sentinel = tmp_path / "ran"
    values = {f"V{i}": v.format(s=sentinel) for i, v in enumerate(HOSTILE)}
    b = make_build(make_variables=values, targets=["config"])
    assert b.run().status is Status.PASS
    make = [unwrap(c.argv) for c in fake_runtime.calls if unwrap(c.argv)[0] == "make"]
    assert make
    for argv in make:
        assert [a for a in argv if a.startswith("V")] == [f"{k}={v}" for k, v in values.items()]
    # The real runtime, inside the jobserver's sh -c wrapper: a make that
    # prints its argv gets each value back whole, and nothing ran them.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_FILE"\n')
    (bin_dir / "make").chmod(0o755)
    argv = jobservers.wrap(b.make_command(["tinyconfig"]), tmp_path / "fifo")
    (tmp_path / "fifo").touch()
    rt = LocalRuntime({"PATH": f"{bin_dir}:/usr/bin:/bin", "ARGV_FILE": str(tmp_path / "argv")})
    with (tmp_path / "make.log").open("wb") as out:
        assert rt.run(argv, cwd=tmp_path, env={}, output=out) == 0
    got = (tmp_path / "argv").read_bytes().decode().split("\0")[:-1]
    assert got == b.make_command(["tinyconfig"])[1:]
    assert not sentinel.exists()


def test_reproducer_with_shell_metacharacters_round_trips(make_build, tmp_path):
    sentinel = tmp_path / "ran"
    values = {f"V{i}": v.format(s=sentinel) for i, v in enumerate(HOSTILE)}
    env = {"E": f"$(touch {sentinel}); `touch {sentinel}`"}
    b = make_build(make_variables=values, environment=env, kconfig_add=['CONFIG_S="a\'b $x"'])
    line = b.reproducer()
    argv = shlex.split(line)
    for k, v in values.items():
        assert f"{k}={v}" in argv
    assert f"--environment=E={env['E']}" in argv
    assert '--kconfig-add=CONFIG_S="a\'b $x"' in argv
    # A POSIX shell reads the pasted line the same way shlex does.
    script = 'kbuild() { printf "%s\\0" "$@"; }; ' + line
    done = subprocess.run(["sh", "-c", script], capture_output=True, check=True)
    assert done.stdout.decode().split("\0")[:-1] == argv[1:]
    assert not sentinel.exists()


def test_reproducer_of_a_build_with_reproducible_mode_off(make_build):
    argv = shlex.split(make_build(reproducible=False).reproducer())
    assert "--reproducible=off" in argv
    assert not any("KBUILD_BUILD_TIMESTAMP" in a for a in argv)


def test_reproducible_mode_sets_its_variables_for_every_command(
    make_build, fake_runtime, kernel_tree, tmp_path
):
    os.utime(kernel_tree / "Makefile", (1_700_000_000, 1_700_000_000))
    b = make_build(targets=["headers"], make_variables={"KCFLAGS": "-O2"})
    b.run()
    build = tmp_path / "build"
    ours = f"-fdebug-prefix-map={kernel_tree}=. -fdebug-prefix-map={build}=."
    if len(str(build)) < len(str(kernel_tree)):
        ours = f"-fdebug-prefix-map={build}=. -fdebug-prefix-map={kernel_tree}=."
    for call in fake_runtime.calls:
        assert call.env["KBUILD_BUILD_TIMESTAMP"] == "Tue Nov 14 22:13:20 UTC 2023"
        assert call.env["KBUILD_BUILD_USER"] == call.env["KBUILD_BUILD_HOST"] == "kbuild"
        assert call.env["KAFLAGS"] == ours
        assert call.env["XZ_OPT"] == "-T1"
        assert "--sort=name" in call.env["TAR_OPTIONS"]
        assert call.env["TAR_OPTIONS"].endswith("--mtime=@1700000000")
        # The user's KCFLAGS is a make variable: ours are appended there.
        assert "KCFLAGS" not in call.env
    make = next(c.argv for c in fake_runtime.calls if c.goal == "headers_install")
    assert f"KCFLAGS=-O2 {ours}" in make
    record = metadata(b)["reproducible"]
    assert record["enabled"] is True and record["epoch"] == 1_700_000_000
    assert record["variables"]["KCFLAGS"] == f"-O2 {ours}"
    assert record["sources"]["KCFLAGS"] == "make_variables + prefix map"
    assert record["sources"]["KBUILD_BUILD_TIMESTAMP"] == "default (mtime of the tree's Makefile)"
    assert metadata(b)["makevars"]["KCFLAGS"] == f"-O2 {ours}"


def test_a_users_variables_win_over_reproducible_mode(make_build, fake_runtime):
    b = make_build(
        targets=["config"],
        environment={"KBUILD_BUILD_TIMESTAMP": "@5", "KBUILD_BUILD_USER": "me"},
        make_variables={"KBUILD_BUILD_HOST": "box"},
    )
    b.run()
    env = fake_runtime.calls[0].env
    assert env["KBUILD_BUILD_TIMESTAMP"] == "@5" and env["KBUILD_BUILD_USER"] == "me"
    assert "KBUILD_BUILD_HOST" not in env  # make's command line has the user's
    assert "KBUILD_BUILD_HOST=box" in fake_runtime.calls[0].argv
    assert env["TAR_OPTIONS"].endswith("--mtime=@5")
    record = metadata(b)["reproducible"]
    assert record["sources"]["KBUILD_BUILD_TIMESTAMP"] == "env"
    assert record["sources"]["KBUILD_BUILD_HOST"] == "make_variables"
    assert record["variables"]["KBUILD_BUILD_HOST"] == "box"


def test_reproducible_mode_off_sets_nothing(make_build, fake_runtime):
    b = make_build(targets=["config"], reproducible=False)
    b.run()
    env = fake_runtime.calls[0].env
    assert not {"KBUILD_BUILD_TIMESTAMP", "KCFLAGS", "TAR_OPTIONS", "XZ_OPT"} & set(env)
    assert metadata(b)["reproducible"] == {
        "enabled": False,
        "variables": {},
        "sources": {},
        "epoch": None,
    }


def test_reproducer_makes_matrix_relative_kconfig_absolute(make_build, tmp_path):
    base = tmp_path / "matrices"
    base.mkdir()
    (base / "my.config").write_text("CONFIG_MINE=y\n")
    b = make_build(kconfig="my.config", kconfig_base_dir=base)
    assert f"--kconfig={base / 'my.config'}" in shlex.split(b.reproducer())


def test_reproducer_keeps_fail_fast(make_build):
    assert "--fail-fast" in shlex.split(make_build(fail_fast=True).reproducer())


# -- a BuildSpec and BuildOptions ---------------------------------------------


def test_build_of_a_spec(kernel_tree, fake_runtime, tmp_path):
    spec = BuildSpec.make(
        "x86_64",
        "gcc",
        "tinyconfig",
        kconfig_add=["CONFIG_X=y"],
        targets=["kernel"],
        make_variables={"W": 1},
        env={"E": "e"},
        wrapper="ccache",
        name="named",
        base_dir=tmp_path / "m",
    )
    assert spec.id == "x86_64-gcc-tinyconfig-named"
    b = Build(kernel_tree, spec, runtime=fake_runtime, output_dir=tmp_path / "o")
    assert b.id == spec.id
    assert b.targets == ["kernel"]
    assert b.spec.make_variables == (("W", "1"),)
    assert b.spec.env == (("E", "e"),)
    assert b.wrapper.name == "ccache"
    assert b.spec.kconfig_add == ("CONFIG_X=y",)
    assert b.spec.base_dir == tmp_path / "m"
    assert b.runtime is fake_runtime
    assert b.result.record is b.record


def test_api_keywords_are_routed_to_spec_and_options(kernel_tree, fake_runtime):
    b = Build(
        kernel_tree,
        target_arch="arm64",
        environment={"A": "1"},
        jobs=2,
        timeout=5,
        runtime=fake_runtime,
    )
    assert b.spec.arch == "arm64" and b.spec.env == (("A", "1"),)
    assert b.options.jobs == 2 and b.options.timeout == 5


def test_unknown_api_keyword_lists_the_accepted_ones(kernel_tree):
    with pytest.raises(
        TypeError, match="Build\\(\\): unknown keyword 'jbos'; accepted: baseline, cache_dir"
    ):
        Build(kernel_tree, jbos=2)


def test_a_toolchain_that_cannot_build_the_arch_skips_every_target_everywhere(
    kernel_tree, fake_runtime, tmp_path
):
    # The matrix makes sparc+clang a skip; the API applies the same rule.
    b = Build(
        kernel_tree,
        target_arch="sparc",
        toolchain="clang-16",
        runtime=fake_runtime,
        output_dir=tmp_path / "o",
    )
    r = b.run()
    assert {t.status for t in r.targets.values()} == {Status.SKIP}
    assert r["kernel"].reason == "clang-16 cannot build arch sparc (arch data: clang: false)"
    assert fake_runtime.calls == []
    assert metadata(b)["skip_reason"] == r["kernel"].reason and metadata(b)["status"] == "SKIP"


def test_timeout_kills_the_target_and_is_an_error(make_build, fake_runtime):
    fake_runtime.hang = {"bzImage"}
    b = make_build(targets=["kernel", "debugkernel"], timeout=7)
    with pytest.raises(KbuildInfraError, match=r"^timeout after 7 s .*: make was killed"):
        b.run_target("kernel")
    assert fake_runtime.timeouts and 0 < fake_runtime.timeouts[0] <= 7
    assert b.result["kernel"].status is Status.ERROR
    skipped = b.run_target("debugkernel")
    assert skipped.status is Status.SKIP
    assert skipped.reason == "target kernel timed out: the build stopped there"
    b.finish()
    meta = metadata(b)
    assert meta["targets"]["kernel"]["status"] == "ERROR" and meta["status"] == "ERROR"
    assert "--timeout=7" in meta["reproducer"]


def test_a_target_timeout_wins_over_the_runs(make_build, fake_runtime):
    fake_runtime.hang = {"bzImage"}
    b = make_build(targets=["kernel"], timeout=600, target_timeouts={"kernel": 3})
    assert (b.timeout_of("kernel"), b.timeout_of("config")) == (3.0, 600)
    with pytest.raises(KbuildInfraError, match=r"^timeout after 3 s .*: make was killed"):
        b.run_target("kernel")
    assert 0 < fake_runtime.timeouts[-1] <= 3
    b.finish()
    assert "--target-timeout=kernel=3" in metadata(b)["reproducer"]


def test_fake_runtime_is_a_runtime():
    from pytest_kbuild.runtime.base import Runtime

    assert isinstance(FakeRuntime(), Runtime)
    assert goal_of(["make", "-s", "O=/b", "CC=gcc", "bzImage"]) == "bzImage"
    assert issubclass(KbuildUserError, KbuildError)
    assert definitions.KINDS


# -- shared jobserver ---------------------------------------------------------------------------


@pytest.fixture
def jobserver():
    from pytest_kbuild.run.jobserver import Jobserver

    server = Jobserver(2)
    yield server
    server.close()


def test_jobserver_wraps_make_without_jobs_and_logs_the_real_command(
    make_build, fake_runtime, jobserver, tmp_path
):
    b = make_build(targets=["kernel"], jobserver=jobserver.path)
    held = []
    fake_runtime.on_run = lambda call: held.append(jobserver.available())
    r = b.run()
    assert r.status is Status.PASS
    make_calls = [c.argv for c in fake_runtime.calls]
    for argv in make_calls:
        assert argv[:2] == ["sh", "-c"] and argv[3:6] == ["sh", str(jobserver.path), "make"]
        assert "MAKEFLAGS }--jobserver-auth=3,3" in argv[2] and " -j " not in argv[2]
        assert not any(a.startswith(("--jobs", "-j")) for a in argv[5:])
    # Each command held one token (its implicit job) while it ran; all came back.
    assert held == [1] * len(make_calls)
    assert jobserver.available() == 2
    logged = [ln[2:] for ln in log_text(b).splitlines() if ln.startswith("$ ")]
    assert logged == [shlex.join(argv) for argv in make_calls]
    meta = metadata(b)
    assert meta["jobs"] is None and meta["jobserver"] == {"fifo": str(jobserver.path)}


def test_jobserver_slot_is_held_by_other_commands_too(make_build, fake_runtime, jobserver):
    b = make_build(targets=["headers"], jobserver=jobserver.path)
    held = {}
    fake_runtime.on_run = lambda call: held.setdefault(call.goal, jobserver.available())
    b.run()
    assert held == {"tinyconfig": 1, "rm": 1, "headers_install": 1, "tar": 1}
    tar = next(c.argv for c in fake_runtime.calls if c.goal == "tar")
    assert tar[0] == "tar"  # only make is wrapped


def test_jobserver_token_comes_back_on_ctrl_c(make_build, fake_runtime, jobserver):
    fake_runtime.interrupt.add("bzImage")
    b = make_build(targets=["kernel"], jobserver=jobserver.path)
    with pytest.raises(KeyboardInterrupt):
        b.run()
    assert jobserver.available() == 2


def test_jobserver_fifo_gone_is_an_infra_error(make_build, fake_runtime, tmp_path):
    b = make_build(targets=["config"], jobserver=tmp_path / "gone")
    with pytest.raises(KbuildInfraError, match="jobserver FIFO .*gone.* cannot be opened"):
        b.run()
    assert fake_runtime.calls == []
    assert metadata(b)["targets"]["config"]["status"] == "ERROR"


def test_no_jobserver_keeps_jobs(make_build, fake_runtime):
    make_build(targets=["config"]).run()
    assert "--jobs=3" in fake_runtime.calls[0].argv
    assert fake_runtime.calls[0].argv[0] == "make"
