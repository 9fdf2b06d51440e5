"""The boot initramfs: the newc archive, the init's compiler command and its cache."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_kbuild.boot import initramfs
from pytest_kbuild.errors import KbuildInfraError


def entries(archive: bytes):
    """(name, mode, rdev major, rdev minor, data) of each newc entry."""
    out, pos = [], 0
    while True:
        assert archive[pos : pos + 6] == b"070701"
        f = [int(archive[pos + 6 + 8 * i : pos + 14 + 8 * i], 16) for i in range(13)]
        namesize, filesize = f[11], f[6]
        start = pos + 110
        name = archive[start : start + namesize - 1].decode()
        data_at = start + namesize + (-(110 + namesize) % 4)
        data = archive[data_at : data_at + filesize]
        if name == "TRAILER!!!":
            return out
        out.append((name, f[1], f[9], f[10], data))
        pos = data_at + filesize + (-filesize % 4)


def test_the_archive_holds_dev_console_and_an_executable_init():
    archive = initramfs.cpio(b"\x7fELF-init")
    assert len(archive) % 512 == 0
    assert entries(archive) == [
        ("dev", 0o040755, 0, 0, b""),
        ("dev/console", 0o020600, 5, 1, b""),
        ("init", 0o100755, 0, 0, b"\x7fELF-init"),
    ]


@pytest.mark.skipif(shutil.which("cpio") is None, reason="cpio is not installed")
def test_gnu_cpio_reads_the_archive(tmp_path):
    proc = subprocess.run(
        ["cpio", "-t"], input=initramfs.cpio(b"x" * 5), capture_output=True, check=True
    )
    assert proc.stdout.decode().split() == ["dev", "dev/console", "init"]


def test_gcc_and_clang_commands():
    assert initramfs.compiler_argv("aarch64-linux-gnu-gcc", "aarch64-linux-gnu", []) == [
        "aarch64-linux-gnu-gcc"
    ]
    assert initramfs.compiler_argv("clang-16", "riscv64-linux-gnu", ["-m32"]) == [
        "clang-16",
        "--target=riscv64-linux-gnu",
        "-fuse-ld=lld",
        "-m32",
    ]


def nolibc_tree(tmp_path):
    tree = tmp_path / "linux"
    (tree / initramfs.NOLIBC).mkdir(parents=True, exist_ok=True)
    (tree / initramfs.NOLIBC / "nolibc.h").write_text("/* nolibc */\n")
    return tree


def test_the_cache_key_follows_nolibc_the_compiler_its_flags_and_version(tmp_path, monkeypatch):
    tree = nolibc_tree(tmp_path)
    key = initramfs.cache_key(tree, ["gcc"], "gcc 12")
    assert key == initramfs.cache_key(tree, ["gcc"], "gcc 12")
    assert key != initramfs.cache_key(tree, ["gcc"], "gcc 13")
    assert key != initramfs.cache_key(tree, ["clang"], "gcc 12")
    monkeypatch.setattr(initramfs, "CFLAGS", (*initramfs.CFLAGS, "-O0"))
    assert key != initramfs.cache_key(tree, ["gcc"], "gcc 12")
    monkeypatch.undo()
    (tree / initramfs.NOLIBC / "nolibc.h").write_text("/* changed */\n")
    assert key != initramfs.cache_key(tree, ["gcc"], "gcc 12")


def test_a_tree_without_nolibc_is_an_infra_error_naming_it(tmp_path):
    with pytest.raises(KbuildInfraError, match="has no tools/include/nolibc/nolibc.h"):
        initramfs.cache_key(tmp_path, ["gcc"], "")


class FakeRunner:
    """Records commands; the compiler 'builds' init by writing its -o file."""

    def __init__(self, fail: str = ""):
        self.calls: list[list[str]] = []
        self.fail = fail

    def __call__(self, cmd):
        self.calls.append(cmd)
        if self.fail and cmd[0] == self.fail:
            return 2
        if cmd[0] != "make":
            Path(cmd[cmd.index("-o") + 1]).write_bytes(b"\x7fELF-init")
        return 0


def build(tmp_path, run):
    lines = []
    init = initramfs.build_init(
        tree=nolibc_tree(tmp_path),
        build_dir=tmp_path / "build",
        cache=tmp_path / "cache",
        argv=["x86_64-linux-gnu-gcc"],
        compiler_version="gcc 12",
        run=run,
        log=lines.append,
    )
    return init, lines


def test_init_is_built_with_the_trees_headers_then_taken_from_the_cache(tmp_path):
    run = FakeRunner()
    init, lines = build(tmp_path, run)
    assert init.read_bytes() == b"\x7fELF-init" and init.is_relative_to(tmp_path / "cache")
    assert run.calls[0] == ["make", "headers"]
    cc = run.calls[1]
    assert cc[0] == "x86_64-linux-gnu-gcc" and "-nostdlib" in cc and "-static" in cc
    assert cc[cc.index("-include") + 1].endswith("tools/include/nolibc/nolibc.h")
    assert cc[cc.index("-I") + 1] == str(tmp_path / "build" / "usr" / "include")
    assert '-DKBUILD_BOOT_MARKER="pytest-kbuild-boot: init ran"' in cc
    assert lines[-1].startswith("I: boot: init built and cached: ")
    again = FakeRunner()
    assert build(tmp_path, again)[0] == init
    assert again.calls == []


def test_a_libc_init_needs_no_nolibc_and_is_linked_against_the_c_library(tmp_path):
    run = FakeRunner()
    init = initramfs.build_init(
        tree=tmp_path / "no-nolibc",
        build_dir=tmp_path / "build",
        cache=tmp_path / "cache",
        argv=["s390x-linux-gnu-gcc"],
        compiler_version="gcc 12",
        run=run,
        log=[].append,
        libc=True,
    )
    assert init.read_bytes() == b"\x7fELF-init"
    [cc] = run.calls  # no 'make headers': the C library brings its own kernel headers
    assert cc[0] == "s390x-linux-gnu-gcc" and "-static" in cc and "-DKBUILD_BOOT_LIBC" in cc
    assert "-nostdlib" not in cc and "-include" not in cc and "-I" not in cc


def test_the_libc_and_nolibc_inits_are_cached_apart(tmp_path):
    tree = nolibc_tree(tmp_path)
    nolibc = initramfs.cache_key(tree, ["gcc"], "gcc 12")
    libc = initramfs.cache_key(tmp_path / "elsewhere", ["gcc"], "gcc 12", libc=True)
    assert libc != nolibc and libc == initramfs.cache_key(tree, ["gcc"], "gcc 12", libc=True)
    assert libc != initramfs.cache_key(tree, ["cc"], "gcc 12", libc=True)


@pytest.mark.parametrize(
    ("fail", "message"),
    [
        ("make", "'make headers' failed"),
        ("x86_64-linux-gnu-gcc", "could not build the init (x86_64-linux-gnu-gcc)"),
    ],
)
def test_a_failed_step_is_an_infra_error(tmp_path, fail, message):
    with pytest.raises(KbuildInfraError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(tmp_path, FakeRunner(fail))
