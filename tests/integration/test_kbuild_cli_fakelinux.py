"""kbuild's TuxMake-style options on fakelinux (issue 14): -v shows make's
output live, -q only errors, -I picks the kernel image, --shell opens a
shell in the build's environment (fed on stdin here), -i implies a container."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile

import pytest

from tests.support import X86_64_GCC, require_engine

KBUILD = [sys.executable, "-c", "from pytest_kbuild.cli import kbuild_main; exit(kbuild_main())"]


def kbuild(tree, tmp_path, *args, stdin=""):
    return subprocess.run(
        [*KBUILD, f"--directory={tree}", "--target-arch=x86_64", f"--output-dir={tmp_path / 'o'}"]
        + list(args),
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )


def test_verbose_shows_makes_output_and_commands(fakelinux, tmp_path):
    done = kbuild(fakelinux, tmp_path, "-v", "config", "kernel")
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "o/build.log").read_text()
    assert "$ make --keep-going" in log and "--silent" not in log
    # what build.log got after its header is on stdout too, in order, each
    # target's output before kbuild's line about it
    body = log.split("\n", 2)[2].splitlines()
    shown = [ln for ln in done.stdout.splitlines() if not ln.startswith(("I: ", "# to repro"))]
    assert "  CC      kernel/fork.o" in body and shown == body, done.stdout
    assert done.stdout.index("is ready") < done.stdout.index("I: kernel: PASS")
    quiet = kbuild(fakelinux, tmp_path, "config", "kernel")
    assert "$ make" not in quiet.stdout and "--silent" in (tmp_path / "o/build.log").read_text()


def test_quiet_prints_only_what_failed(fakelinux, tmp_path, monkeypatch):
    done = kbuild(fakelinux, tmp_path, "-q", "config", "kernel")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    monkeypatch.setenv("FAIL", "kernel")
    failed = kbuild(fakelinux, tmp_path, "-q", "config", "kernel")
    assert failed.returncode == 2
    assert failed.stdout.startswith("E: kernel: FAIL in "), failed.stdout
    assert "config" not in failed.stdout and "reproduce" not in failed.stdout


def test_kernel_image_vmlinux(fakelinux, tmp_path):
    done = kbuild(fakelinux, tmp_path, "-I", "vmlinux", "config", "kernel")
    assert done.returncode == 0, done.stdout + done.stderr
    meta = json.loads((tmp_path / "o/metadata.json").read_text())
    assert set(meta["artifacts"]) == {"config", "vmlinux"}
    assert "--kernel-image=vmlinux" in meta["reproducer"]
    kernel = (tmp_path / "o/build.log").read_text().split("# target kernel\n")[1]
    assert kernel.splitlines()[0].endswith(" vmlinux"), kernel


def test_a_bad_kernel_image_is_bad_input(fakelinux, tmp_path):
    done = kbuild(fakelinux, tmp_path, "-I", "../bzImage", "config")
    assert done.returncode == 1
    assert "'../bzImage' is not a kernel image file name" in done.stderr


SHELL_INPUT = (
    'echo "ARCH=$ARCH out=$KBUILD_OUTPUT"\nmake image_name\npwd\necho "flags: $MAKEFLAGS"\nexit 3\n'
)


def test_shell_runs_in_the_builds_environment(fakelinux, tmp_path):
    done = kbuild(
        fakelinux, tmp_path, "-b", str(tmp_path / "b"), "--shell", "config", stdin=SHELL_INPUT
    )
    assert done.returncode == 0, done.stdout + done.stderr  # the build's status, not the shell's
    assert "I: config: PASS" in done.stdout
    assert f"ARCH=x86_64 out={tmp_path / 'b'}\n" in done.stdout
    assert "\narch/x86/boot/bzImage\n" in done.stdout  # make got ARCH=x86_64 from MAKEFLAGS
    assert f"\n{fakelinux}\n" in done.stdout
    assert "flags: -j" in done.stdout and " -- ARCH=x86_64 CC=gcc HOSTCC=gcc\n" in done.stdout


def test_shell_in_a_container(fakelinux, tmp_path):
    require_engine("podman", X86_64_GCC)
    done = kbuild(
        fakelinux, tmp_path, "-i", X86_64_GCC, "--shell", "config", stdin=SHELL_INPUT
    )  # -i: a container runtime without -r
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ARCH=x86_64 out=/kbuild/build\n" in done.stdout
    assert "\narch/x86/boot/bzImage\n" in done.stdout and "\n/kbuild/src\n" in done.stdout
    meta = json.loads((tmp_path / "o/metadata.json").read_text())
    assert meta["runtime"]["name"] == "podman"
    assert meta["tools"]["make"].startswith("GNU Make")


@pytest.mark.parametrize(("image", "expected"), [(None, "local"), (X86_64_GCC, "podman")])
def test_image_implies_a_container_runtime(image, expected, monkeypatch, tmp_path):
    from pytest_kbuild.cli import kbuild as cli

    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "podman").write_text("#!/bin/sh\n")
    (tmp_path / "podman").chmod(0o755)
    assert cli._implied_runtime(image) == expected
    (tmp_path / "podman").unlink()
    (tmp_path / "docker").write_text("#!/bin/sh\n")
    (tmp_path / "docker").chmod(0o755)
    assert cli._implied_runtime(image) == ("docker" if image else "local")


@pytest.mark.parametrize(
    ("z", "suffix", "magic"), [("zstd", ".zst", b"\x28\xb5\x2f\xfd"), ("none", "", b"")]
)
def test_compression(fakelinux, tmp_path, z, suffix, magic):
    done = kbuild(fakelinux, tmp_path, "-z", z, "config", "debugkernel", "headers")
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "o"
    assert (out / f"vmlinux{suffix}").read_bytes().startswith(magic)
    headers = out / f"headers.tar{suffix}"
    assert headers.read_bytes().startswith(magic)
    if not magic:
        assert tarfile.is_tarfile(headers)
    assert not list(out.glob("*.xz"))
