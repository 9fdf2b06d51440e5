"""The boot target's initramfs: a static /init built from data/boot/init.c with
the kernel tree's own tools/include/nolibc and the build's compiler (nothing
downloaded), cached per arch and toolchain, packed as a newc cpio.

No libc and no libgcc: init divides nothing, and a host gcc building i386
with -m32 has no 32-bit libgcc without Debian's multilib packages. Where the
tree's nolibc lacks the arch (6.1: s390, powerpc), the machine names a cross
gcc whose C library init links statically against (libc=True)."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from ..definitions import DATA_DIR
from ..errors import KbuildInfraError
from . import console as bootconsole

INIT_SOURCE = DATA_DIR / "boot" / "init.c"
NOLIBC = "tools/include/nolibc"
WORK = "kbuild-boot"  # in the build dir: the init's source, headers and binary
CFLAGS = (
    "-Os",
    "-static",
    "-fno-asynchronous-unwind-tables",
    "-fno-stack-protector",
    "-fno-ident",
)
LIBC_DEFINE = "-DKBUILD_BOOT_LIBC"  # init.c's switch from nolibc to the C library

Runner = Callable[[list[str]], int]


def compiler_argv(compiler: str, clang_target: str, extra: Sequence[str]) -> list[str]:
    """The compiler command for init: *compiler* as the build uses it; clang
    also gets the target triple and lld (it cross-compiles by flag)."""
    argv = [compiler]
    if "clang" in Path(compiler).name:
        argv += [f"--target={clang_target}", "-fuse-ld=lld"]
    return argv + list(extra)


def cache_key(tree: Path, argv: Sequence[str], compiler_version: str, libc: bool = False) -> str:
    """What the init binary depends on: its source, the tree's nolibc (or,
    with *libc*, the C library's compiler), the compiler command, flags and
    version."""
    h = hashlib.sha256()
    h.update(INIT_SOURCE.read_bytes())
    nolibc = tree / NOLIBC
    if libc:
        h.update(LIBC_DEFINE.encode())
    elif not (nolibc / "nolibc.h").is_file():
        raise KbuildInfraError(
            f"boot: the tree {str(tree)!r} has no {NOLIBC}/nolibc.h to build the boot "
            "initramfs's init with (Linux 5.1 or later has it)"
        )
    else:
        for f in sorted(nolibc.glob("*.h")):
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    h.update("\0".join([*argv, *CFLAGS, compiler_version, bootconsole.MARKER]).encode())
    return h.hexdigest()[:16]


def build_init(
    *,
    tree: Path,
    build_dir: Path,
    cache: Path,
    argv: Sequence[str],
    compiler_version: str,
    run: Runner,
    log: Callable[[str], None],
    libc: bool = False,
) -> Path:
    """The cached init for this tree and compiler, built first when missing.

    *run* runs a command as the build does: ``make ...`` is a Kbuild call
    (``make headers`` puts the tree's UAPI headers in the build dir), other
    commands run in the build dir. With *libc*, init is linked statically
    against the compiler's C library (its own kernel headers, no nolibc).
    Raises KbuildInfraError when it fails.
    """
    cached = cache / cache_key(tree, argv, compiler_version, libc) / "init"
    if cached.is_file():
        log(f"I: boot: init from the cache: {cached}")
        return cached
    work = build_dir / WORK
    work.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(INIT_SOURCE, work / "init.c")
    marker = f"-DKBUILD_BOOT_MARKER={_c_string(bootconsole.MARKER)}"
    if libc:
        headers = [LIBC_DEFINE]
    else:
        if run(["make", "headers"]) != 0:
            raise KbuildInfraError(
                "boot: 'make headers' failed; the init cannot be built (build.log)"
            )
        nolibc = str(tree / NOLIBC / "nolibc.h")
        headers = ["-nostdlib", "-include", nolibc, "-I", str(build_dir / "usr" / "include")]
    cmd = [*argv, *CFLAGS, marker, *headers, "-o", str(work / "init"), str(work / "init.c")]
    if run(cmd) != 0:
        raise KbuildInfraError(
            f"boot: the compiler could not build the init ({argv[0]}); see build.log"
        )
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    shutil.copyfile(work / "init", tmp)
    tmp.replace(cached)
    log(f"I: boot: init built and cached: {cached}")
    return cached


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _entry(
    name: str, mode: int, data: bytes = b"", ino: int = 1, rdev: tuple[int, int] = (0, 0)
) -> bytes:
    fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name) + 1, 0]
    header = b"070701" + b"".join(b"%08X" % f for f in fields)
    out = header + name.encode() + b"\0"
    out += b"\0" * (-len(out) % 4)
    out += data + b"\0" * (-len(data) % 4)
    return out


def cpio(init: bytes) -> bytes:
    """A newc cpio archive holding /dev/console and the executable /init."""
    parts = [
        _entry("dev", 0o040755, ino=1),
        _entry("dev/console", 0o020600, ino=2, rdev=(5, 1)),
        _entry("init", 0o100755, init, ino=3),
        _entry("TRAILER!!!", 0, ino=0),
    ]
    out = b"".join(parts)
    return out + b"\0" * (-len(out) % 512)
