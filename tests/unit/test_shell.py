"""shell: the environment of kbuild --shell, where a plain make is the build's make."""

import os
import subprocess
from pathlib import Path

import pytest

from pytest_kbuild.build import shell
from pytest_kbuild.errors import KbuildInfraError
from pytest_kbuild.runtime.local import LocalRuntime


def test_makeflags_make_the_variables_command_line_ones(tmp_path):
    flags = shell.makeflags({"ARCH": "arm64", "CC": "ccache aarch64-linux-gnu-gcc"}, 4)
    assert flags == "-j4 -- ARCH=arm64 CC=ccache\\ aarch64-linux-gnu-gcc"
    # a Makefile's own `CC = gcc` loses to them, as to make's command line
    (tmp_path / "Makefile").write_text("CC = gcc\nall:\n\t@echo '$(CC)|$(ARCH)|$(origin CC)'\n")
    done = subprocess.run(
        ["make", "-s"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "MAKEFLAGS": flags},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "ccache aarch64-linux-gnu-gcc|arm64|command line\n"


def test_environment():
    env = shell.environment({"E": "1", "ARCH": "mine"}, {"ARCH": "x86_64"}, Path("/b"), None)
    assert env == {"ARCH": "mine", "E": "1", "KBUILD_OUTPUT": "/b", "MAKEFLAGS": "-- ARCH=x86_64"}


def test_a_local_shell_reads_its_commands(tmp_path, capfd):
    read, write = os.pipe()
    os.write(write, b"echo in $PWD with $KBUILD_OUTPUT; exit 7\n")
    os.close(write)
    saved = os.dup(0)
    os.dup2(read, 0)
    try:
        rc = shell.run(LocalRuntime(), tmp_path, {"KBUILD_OUTPUT": "/b"})
    finally:
        os.dup2(saved, 0)
    assert rc == 7
    assert capfd.readouterr().out == f"in {tmp_path} with /b\n"


def test_a_runtime_without_interactive_says_so(tmp_path):
    class Plain:
        name = "plain"

    with pytest.raises(KbuildInfraError, match="runtime plain cannot open a shell"):
        shell.run(Plain(), tmp_path, {})
