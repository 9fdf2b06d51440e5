"""probes: tool versions and git state in one runtime call, and what a build made."""

import os
import subprocess
import time

import pytest

from pytest_kbuild.build import probes
from pytest_kbuild.runtime.local import LocalRuntime


def test_one_shell_runs_every_command_and_tells_each_answer(tmp_path):
    rt = LocalRuntime()
    answers = probes.run(
        rt,
        {
            "sh": ["sh", "-c", "echo 'first line'; echo second"],
            "quoted": ["printf", "%s\n", 'it\'s "quoted" $HOME'],
            "fails": ["sh", "-c", "echo oops; exit 3"],
            "missing": ["no-such-tool-kbuild", "--version"],
            "stdin": ["cat"],  # reads nothing: stdin is /dev/null
            "marker": ["echo", f"{probes.MARK}-rc 0"],
        },
        tmp_path,
    )
    assert answers == {
        "sh": "first line\nsecond",
        "quoted": 'it\'s "quoted" $HOME',
        "fails": None,
        "missing": None,
        "stdin": "",
        "marker": f"{probes.MARK}-rc 0",
    }
    assert probes.run(rt, {}, tmp_path) == {}


def test_a_runtime_that_answers_nothing_gives_none_for_each():
    assert probes.parse("", 2) == [None, None]
    assert probes.parse("sh: not found\n", 1) == [None]


def test_probes_are_cheap(tmp_path):
    tools = probes.tool_commands("gcc", {}, ["bc", "flex", "bison", "gzip", "tar", "xz"])
    start = time.monotonic()
    answers = probes.run(LocalRuntime(), tools, tmp_path)
    assert time.monotonic() - start < 1.0  # a few hundred ms at most; typically ~30 ms
    assert probes.first_line(answers["make"]).startswith("GNU Make")


@pytest.mark.parametrize(
    ("makevars", "ld", "size"),
    [
        ({}, "ld", "size"),
        ({"CROSS_COMPILE": "aarch64-linux-gnu-"}, "aarch64-linux-gnu-ld", "aarch64-linux-gnu-size"),
        ({"LLVM": "1", "CROSS_COMPILE": "x-"}, "ld.lld", "llvm-size"),
        ({"LLVM": "-16"}, "ld.lld-16", "llvm-size-16"),
        ({"LLVM": "/opt/llvm-21/bin/"}, "/opt/llvm-21/bin/ld.lld", "/opt/llvm-21/bin/llvm-size"),
        (
            {"LLVM": "-16", "LD": "powerpc64le-linux-gnu-ld"},
            "powerpc64le-linux-gnu-ld",
            "llvm-size-16",
        ),
    ],
)
def test_linker_and_size_tool_follow_the_make_variables(makevars, ld, size):
    assert probes.linker(makevars) == ld
    assert probes.size_tool(makevars) == size


def test_tool_commands():
    assert probes.tool_commands("clang-16", {"LLVM": "-16"}, ["openssl", "bc", "make"]) == {
        "make": ["make", "--version"],
        "compiler": ["clang-16", "--version"],
        "ld": ["ld.lld-16", "--version"],
        "bc": ["bc", "--version"],
        "openssl": ["openssl", "version"],
    }


def test_git_state_of_a_real_git_tree(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "topic")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    git("tag", "v6.1")
    git("remote", "add", "origin", "https://user:token@example.org/linux.git")
    answers = probes.run(LocalRuntime(), {f"git.{k}": v for k, v in probes.GIT.items()}, tmp_path)
    state = probes.git_state(answers)
    assert state["branch"] == "topic"
    assert state["describe_tags"] == "v6.1"  # a lightweight tag: only --tags sees it
    assert len(state["commit"]) == 40
    assert state["describe"] == state["commit"][: len(state["describe"])]
    assert state["remote_url"] == "https://user:***@example.org/linux.git"


def test_the_trees_minimum_compiler_version_is_asked_of_its_script(tmp_path):
    assert probes.minimum_command(tmp_path, "llvm", "s390") is None  # no script: no probe
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "min-tool-version.sh").write_text("echo 11.0.0\n")
    command = ["env", "SRCARCH=s390", "sh", "scripts/min-tool-version.sh", "llvm"]
    assert probes.minimum_command(tmp_path, "llvm", "s390") == command
    assert probes.minimum_command(tmp_path, "", "s390") is None
    commands = probes.tool_commands("gcc", {}, [], command)
    assert commands[probes.MINIMUM] == command


def test_vmlinux_size_parses_berkeley_output(tmp_path):
    class Answer:
        def __init__(self, rc, out):
            self.answer = (rc, out)

        def capture(self, argv, *, cwd, env):
            assert argv == ["aarch64-linux-gnu-size", "vmlinux"] and cwd == tmp_path
            return self.answer

    out = "   text\t   data\t    bss\t    dec\t    hex\tfilename\n 1\t 2\t 3\t 6\t 6\tvmlinux\n"
    assert probes.vmlinux_size(Answer(0, out), tmp_path, "aarch64-linux-gnu-size") == {
        "text": 1,
        "data": 2,
        "bss": 3,
    }
    empty = dict.fromkeys(["text", "data", "bss"])
    assert (
        probes.vmlinux_size(
            Answer(1, "size: vmlinux: not found"), tmp_path, "aarch64-linux-gnu-size"
        )
        == empty
    )


def test_text_offset_modules_and_kernelrelease(tmp_path):
    (tmp_path / "System.map").write_text(
        "0000000000000000 A _kernel_size_le\nffff800008000000 T _text\n"
    )
    assert probes.text_offset(tmp_path / "System.map") == "0xffff800008000000"
    assert probes.text_offset(tmp_path / "missing") is None
    assert probes.modules(tmp_path) is None
    (tmp_path / "modules.order").write_text("drivers/a/b.ko\nfs/c.o\n")
    assert probes.modules(tmp_path) == ["drivers/a/b", "fs/c"]
    assert probes.kernelrelease(tmp_path) is None and probes.kernelrelease(None) is None
    (tmp_path / "include/config").mkdir(parents=True)
    (tmp_path / "include/config/kernel.release").write_text("6.1.0-tiny\n")
    assert probes.kernelrelease(tmp_path) == "6.1.0-tiny"


def test_hardware(tmp_path):
    hw = probes.hardware(tmp_path)
    assert 1 <= hw["cores"] <= (os.cpu_count() or 1)
    assert hw["ram_bytes"] > 0 and hw["build_dir_free_bytes"] > 0
    assert probes.hardware(None)["build_dir_free_bytes"] is None


def test_make_kernelrelease_takes_the_release_line_only(tmp_path):
    from tests.unit.fakes import FakeRuntime

    rt = FakeRuntime()
    argv = ["make", "--silent", "O=/b", "ARCH=x86_64", "-s", "kernelrelease"]
    rt.capture_outputs["make"] = (0, "make[1]: Entering directory '/b'\n6.1.76-tiny+\n")
    assert probes.make_kernelrelease(rt, argv, tmp_path, {}) == "6.1.76-tiny+"
    assert rt.captures == [argv]
    rt.capture_outputs["make"] = (2, "6.1.0\nmake: *** [Makefile] Error 2\n")
    assert probes.make_kernelrelease(rt, argv, tmp_path, {}) is None
    rt.capture_outputs["make"] = (0, "make: Nothing to be done\n")
    assert probes.make_kernelrelease(rt, argv, tmp_path, {}) is None
