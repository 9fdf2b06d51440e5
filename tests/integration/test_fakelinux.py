"""fakelinux/, the fake kernel tree the plugin's integration tests build.

Plain pytest (no plugin): each test runs make in a read-only copy of the tree,
exactly as the plugin does (``make --silent --keep-going -j2 O=... ARCH=...``).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import stat
import struct
import subprocess
import time
from pathlib import Path

import pytest

FAKELINUX = Path(__file__).resolve().parents[2] / "fakelinux"
SRCARCHES = [
    "alpha",
    "arc",
    "arm",
    "arm64",
    "hexagon",
    "m68k",
    "mips",
    "parisc",
    "powerpc",
    "riscv",
    "s390",
    "sh",
    "sparc",
    "um",
    "x86",
]
DTS_ARCHES = {"arc", "arm", "arm64", "mips", "powerpc", "riscv"}
ELF_MACHINE = {"x86_64": 62, "i386": 3, "arm64": 183}
# Variables of the caller's environment that would change what make does.
CLEAN_ENV = (
    "FAIL",
    "WARN",
    "FAKELINUX_SLEEP",
    "ARCH",
    "CROSS_COMPILE",
    "LLVM",
    "O",
    "KBUILD_OUTPUT",
    "LOCALVERSION",
    "KCONFIG_CONFIG",
    "KCONFIG_ALLCONFIG",
    "MAKEFLAGS",
    "INSTALL_MOD_PATH",
    "INSTALL_HDR_PATH",
    "INSTALL_DTBS_PATH",
    "INSTALL_PATH",
)

requires_aarch64_gcc = pytest.mark.skipif(
    shutil.which("aarch64-linux-gnu-gcc") is None, reason="aarch64-linux-gnu-gcc is not installed"
)
requires_clang_16 = pytest.mark.skipif(
    shutil.which("clang-16") is None, reason="clang-16 is not installed"
)


def _set_writable(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        if writable:
            mode |= stat.S_IWUSR
        else:
            mode &= ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        path.chmod(mode)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A read-only copy of fakelinux/: any write into the tree fails."""
    dst = tmp_path_factory.mktemp("src") / "linux"
    shutil.copytree(FAKELINUX, dst)
    before = sorted(str(p.relative_to(dst)) for p in dst.rglob("*"))
    _set_writable(dst, False)
    yield dst
    _set_writable(dst, True)
    assert sorted(str(p.relative_to(dst)) for p in dst.rglob("*")) == before


def make(tree, out, *args, env=None, check=True):
    """Run make in *tree* the way the plugin does; return the CompletedProcess."""
    full_env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    full_env.update(env or {})
    cmd = ["make", "--silent", "--keep-going", "-j2"]
    if out is not None:
        cmd.append(f"O={out}")
    proc = subprocess.run(
        [*cmd, *args], cwd=tree, env=full_env, capture_output=True, text=True, timeout=120
    )
    if check:
        assert proc.returncode == 0, f"{proc.args}\n{proc.stdout}\n{proc.stderr}"
    return proc


def config_of(out: Path) -> dict[str, str]:
    """CONFIG_X -> value ('n' for '# CONFIG_X is not set') of out/.config."""
    values = {}
    for line in (out / ".config").read_text().splitlines():
        if m := re.fullmatch(r"(CONFIG_\w+)=(.*)", line):
            values[m[1]] = m[2]
        elif m := re.fullmatch(r"# (CONFIG_\w+) is not set", line):
            values[m[1]] = "n"
    return values


def elf_machine(path: Path) -> int:
    data = path.read_bytes()[:20]
    assert data[:4] == b"\x7fELF", path
    return struct.unpack("<H" if data[5] == 1 else ">H", data[18:20])[0]


def file_says(path: Path) -> str | None:
    if shutil.which("file") is None:
        return None
    return subprocess.run(["file", "-b", str(path)], capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def x86_build(tree, tmp_path_factory):
    """x86_64 defconfig, built once with the native gcc (`make` = all)."""
    out = tmp_path_factory.mktemp("x86-defconfig")
    make(tree, out, "ARCH=x86_64", "defconfig")
    make(tree, out, "ARCH=x86_64")
    return out


# --- layout and version -------------------------------------------------


def test_tree_has_the_files_the_plugin_checks():
    for name in ("Makefile", "Kconfig", "Kbuild", "README.md", "scripts/kconfig/merge_config.sh"):
        assert (FAKELINUX / name).is_file(), name
    for srcarch in SRCARCHES:
        assert (FAKELINUX / "arch" / srcarch / "Makefile").is_file(), srcarch


def test_kernelversion_needs_no_output_dir(tree):
    head = (FAKELINUX / "Makefile").read_text()
    numbers = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)$", head, re.M))
    proc = make(tree, None, "kernelversion")
    assert proc.stdout == "{VERSION}.{PATCHLEVEL}.{SUBLEVEL}\n".format(**numbers)


def test_output_dir_is_required(tree):
    proc = make(tree, None, "ARCH=x86_64", "defconfig", check=False)
    assert proc.returncode != 0
    assert "O=<builddir>" in proc.stderr


def test_unknown_arch_and_unknown_fail_target_are_errors(tree, tmp_path):
    proc = make(tree, tmp_path, "ARCH=arm46", "defconfig", check=False)
    assert proc.returncode != 0 and "unknown ARCH=arm46" in proc.stderr
    proc = make(tree, tmp_path, "ARCH=x86_64", "defconfig", env={"FAIL": "kernal"}, check=False)
    assert proc.returncode != 0 and "unknown target 'kernal'" in proc.stderr


# --- config targets -----------------------------------------------------


def test_tinyconfig(tree, tmp_path):
    make(tree, tmp_path, "ARCH=x86_64", "tinyconfig")
    text = (tmp_path / ".config").read_text()
    assert text.startswith(
        "#\n# Automatically generated file; DO NOT EDIT.\n"
        "# Linux/x86_64 6.1.0 Kernel Configuration\n#\n"
    )
    config = config_of(tmp_path)
    assert config["CONFIG_MODULES"] == "n"
    assert config["CONFIG_FAKE_DRIVER"] == "n"
    assert config["CONFIG_CC_OPTIMIZE_FOR_SIZE"] == "y"  # from kernel/configs/tiny.config
    assert config["CONFIG_64BIT"] == "y"
    assert config["CONFIG_CC_IS_GCC"] == "y"
    assert config["CONFIG_CC_VERSION_TEXT"].startswith('"gcc')
    assert "CONFIG_FAKE_DRIVER2" not in config  # its dependency is n: not written


@pytest.mark.parametrize("arch", ["x86_64", "i386", "arm64", "arm", "riscv", "s390", "mips"])
def test_defconfig(tree, tmp_path, arch):
    make(tree, tmp_path, f"ARCH={arch}", "defconfig")
    config = config_of(tmp_path)
    assert config["CONFIG_MODULES"] == "y"
    assert config["CONFIG_FAKE_DRIVER"] == "m"
    assert config["CONFIG_OF"] == ("y" if arch in DTS_ARCHES else "n")
    # A symbol without a prompt that is n is not written at all, as in Kconfig.
    assert config.get("CONFIG_64BIT", "n") == (
        "y" if arch in {"x86_64", "arm64", "riscv", "s390"} else "n"
    )


def test_olddefconfig_drops_unknown_and_unmet_symbols(tree, tmp_path):
    (tmp_path / ".config").write_text(
        "CONFIG_NO_SUCH_SYMBOL=y\n"
        "CONFIG_FAKE_DRIVER2=m\n"  # depends on FAKE_DRIVER, which is unset
        "CONFIG_FAKE_DRIVER=m\n"  # m without MODULES: y, as Kconfig does
        "CONFIG_PRINTK=m\n"  # m is invalid for a bool: warned about, ignored
        'CONFIG_LOCALVERSION="-test"\n'
        "CONFIG_LOG_BUF_SHIFT=14\n"
        "CONFIG_PHYS_OFFSET=0x1f\n"
        "CONFIG_KASAN=y\n"  # depends on DEBUG_KERNEL
    )
    proc = make(tree, tmp_path, "ARCH=x86_64", "olddefconfig")
    assert "warning: symbol value 'm' invalid for PRINTK" in proc.stderr
    config = config_of(tmp_path)
    assert "CONFIG_NO_SUCH_SYMBOL" not in config
    assert "CONFIG_KASAN" not in config
    assert config["CONFIG_FAKE_DRIVER"] == "y"
    assert config["CONFIG_FAKE_DRIVER2"] == "y"
    assert config["CONFIG_PRINTK"] == "y"
    assert config["CONFIG_LOCALVERSION"] == '"-test"'
    assert config["CONFIG_LOG_BUF_SHIFT"] == "14"
    assert config["CONFIG_PHYS_OFFSET"] == "0x1f"
    assert (tmp_path / ".config.old").is_file()
    assert make(tree, tmp_path, "ARCH=x86_64", "kernelrelease").stdout == "6.1.0-test\n"
    proc = make(tree, tmp_path, "ARCH=x86_64", "kernelrelease", "LOCALVERSION=-x")
    assert proc.stdout == "6.1.0-test-x\n"


def test_tristate_is_limited_by_an_m_dependency(tree, tmp_path):
    (tmp_path / ".config").write_text(
        "CONFIG_MODULES=y\nCONFIG_FAKE_DRIVER=m\nCONFIG_FAKE_DRIVER2=y\n"
    )
    make(tree, tmp_path, "ARCH=x86_64", "olddefconfig")
    assert config_of(tmp_path)["CONFIG_FAKE_DRIVER2"] == "m"


def test_fragment_target_merges_onto_config(tree, tmp_path):
    make(tree, tmp_path, "ARCH=x86_64", "defconfig")
    proc = make(tree, tmp_path, "ARCH=x86_64", "debug.config")
    assert "Merging " in proc.stdout and "kernel/configs/debug.config" in proc.stdout
    config = config_of(tmp_path)
    assert config["CONFIG_DEBUG_INFO"] == "y" and config["CONFIG_KASAN"] == "y"
    assert config["CONFIG_MODULES"] == "y"  # kept from defconfig
    proc = make(tree, tmp_path, "ARCH=x86_64", "nosuch.config", check=False)
    assert proc.returncode != 0
    assert "No configuration exists for this target on this architecture" in proc.stderr


def test_named_defconfig_and_missing_one(tree, tmp_path):
    make(tree, tmp_path, "ARCH=arm", "multi_v7_defconfig")
    assert config_of(tmp_path)["CONFIG_LOCALVERSION"] == '"-v7"'
    proc = make(tree, tmp_path, "ARCH=arm", "nosuch_defconfig", check=False)
    assert proc.returncode != 0
    assert 'Can\'t find default configuration "arch/arm/configs/nosuch_defconfig"' in proc.stderr


def test_allmodconfig_and_savedefconfig(tree, tmp_path):
    make(tree, tmp_path, "ARCH=x86_64", "allmodconfig")
    config = config_of(tmp_path)
    assert config["CONFIG_FAKE_DRIVER"] == "m" and config["CONFIG_FAKE_DEBUG"] == "m"
    assert config["CONFIG_MODULES"] == "y"
    make(tree, tmp_path, "ARCH=x86_64", "savedefconfig")
    assert "CONFIG_FAKE_DRIVER=m\n" in (tmp_path / "defconfig").read_text()


def test_merge_config_script(tree, tmp_path):
    base = tmp_path / "base.config"
    base.write_text("CONFIG_MODULES=y\n# CONFIG_OF is not set\nCONFIG_FAKE_DRIVER=m\n")
    frag1 = tmp_path / "one.config"
    frag1.write_text("CONFIG_OF=y\nCONFIG_FAKE_DRIVER=m\n")
    frag2 = tmp_path / "two.config"
    frag2.write_text("CONFIG_FAKE_DRIVER=y\nCONFIG_DEBUG_KERNEL=y\n")
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(
        [
            "sh",
            str(tree / "scripts/kconfig/merge_config.sh"),
            "-m",
            "-O",
            str(out),
            str(base),
            str(frag1),
            str(frag2),
        ],
        cwd=out,  # like the real script, it writes temporaries in the cwd
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.splitlines()[:5] == [
        f"Using {base} as base",
        f"Merging {frag1}",
        f"Value of CONFIG_OF is redefined by fragment {frag1}:",
        "Previous value: # CONFIG_OF is not set",
        "New value: CONFIG_OF=y",
    ]
    assert f"Value of CONFIG_FAKE_DRIVER is redefined by fragment {frag2}:" in proc.stdout
    # same value again: not a redefinition
    assert f"CONFIG_FAKE_DRIVER is redefined by fragment {frag1}:" not in proc.stdout
    assert config_of(out) == {
        "CONFIG_MODULES": "y",
        "CONFIG_OF": "y",
        "CONFIG_FAKE_DRIVER": "y",
        "CONFIG_DEBUG_KERNEL": "y",
    }


# --- build targets ------------------------------------------------------


def test_build_without_config_fails_like_the_real_tree(tree, tmp_path):
    proc = make(tree, tmp_path / "new", "ARCH=x86_64", "bzImage", check=False)
    assert proc.returncode != 0
    assert f'*** Configuration file "{tmp_path}/new/.config" not found!' in proc.stderr


def test_bzimage_with_native_gcc(tree, x86_build):
    vmlinux = x86_build / "vmlinux"
    assert elf_machine(vmlinux) == ELF_MACHINE["x86_64"]
    if (says := file_says(vmlinux)) is not None:
        assert "x86-64" in says
    assert (x86_build / "arch/x86/boot/bzImage").read_bytes() == vmlinux.read_bytes()
    assert " T start_kernel\n" in (x86_build / "System.map").read_text()
    assert make(tree, x86_build, "ARCH=x86_64", "image_name").stdout == "arch/x86/boot/bzImage\n"


def test_rebuild_is_incremental(tree, x86_build):
    before = (x86_build / "vmlinux").stat().st_mtime_ns
    proc = make(tree, x86_build, "ARCH=x86_64", "bzImage")
    assert proc.stdout == proc.stderr == ""
    assert (x86_build / "vmlinux").stat().st_mtime_ns == before


def test_modules_are_refused_without_config_modules(tree, tmp_path):
    make(tree, tmp_path, "ARCH=x86_64", "tinyconfig")
    for target in ("modules", "modules_install"):
        proc = make(tree, tmp_path, "ARCH=x86_64", target, check=False)
        assert proc.returncode == 2
        assert "*** The present kernel configuration has modules disabled." in proc.stderr


def test_modules_and_modules_install_layout(tree, x86_build, tmp_path):
    assert (x86_build / "modules.order").read_text() == (
        "drivers/fake/fake_driver.ko\ndrivers/fake/fake_driver2.ko\n"
    )
    for name in ("fake_driver", "fake_driver2"):
        assert elf_machine(x86_build / f"drivers/fake/{name}.ko") == ELF_MACHINE["x86_64"]
    make(
        tree,
        x86_build,
        "ARCH=x86_64",
        "modules_install",
        f"INSTALL_MOD_PATH={tmp_path}",
        "INSTALL_MOD_STRIP=1",
    )
    modlib = tmp_path / "lib/modules/6.1.0"
    assert sorted(p.name for p in (modlib / "kernel/drivers/fake").iterdir()) == [
        "fake_driver.ko",
        "fake_driver2.ko",
    ]
    assert (modlib / "modules.dep").read_text() == (
        "kernel/drivers/fake/fake_driver.ko:\n"
        "kernel/drivers/fake/fake_driver2.ko: kernel/drivers/fake/fake_driver.ko\n"
    )
    assert (modlib / "modules.order").read_text() == (
        "kernel/drivers/fake/fake_driver.ko\nkernel/drivers/fake/fake_driver2.ko\n"
    )
    assert (modlib / "build").is_symlink() and (modlib / "source").is_symlink()
    assert b"vermagic=6.1.0 " in (modlib / "kernel/drivers/fake/fake_driver.ko").read_bytes()


@pytest.mark.parametrize("arch", ["arm64", "x86_64"])
def test_dtbs_only_where_the_arch_has_dts(tree, tmp_path, arch):
    # dtbs only needs the host compiler, so no cross toolchain is needed.
    make(tree, tmp_path, f"ARCH={arch}", "defconfig")
    proc = make(tree, tmp_path, f"ARCH={arch}", "dtbs", check=False)
    if arch == "x86_64":
        assert proc.returncode != 0
        assert "No rule to make target 'dtbs'" in proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    dtbs = sorted(tmp_path.glob("arch/arm64/boot/dts/*/*.dtb"))
    assert [p.relative_to(tmp_path / "arch/arm64/boot/dts").as_posix() for p in dtbs] == [
        "fake/fake-board-v2.dtb",
        "fake/fake-board.dtb",
    ]
    blob = dtbs[1].read_bytes()
    magic, totalsize = struct.unpack(">II", blob[:8])
    assert magic == 0xD00DFEED and totalsize == len(blob)
    assert b"fakelinux arm64 fake-board\0" in blob
    make(tree, tmp_path, f"ARCH={arch}", "dtbs_install", f"INSTALL_DTBS_PATH={tmp_path}/dtbs")
    assert (tmp_path / "dtbs/fake/fake-board.dtb").read_bytes() == blob


def test_headers_install(tree, tmp_path):
    # No .config needed, as in the real tree; default path O/usr.
    make(tree, tmp_path, "ARCH=x86_64", "headers_install")
    include = tmp_path / "usr/include"
    assert (include / "linux/fake.h").is_file()
    assert "#define LINUX_VERSION_CODE 393472" in (include / "linux/version.h").read_text()
    assert (include / "asm/bitsperlong.h").is_file() and (include / "asm/types.h").is_file()
    make(tree, tmp_path, "ARCH=arm64", "headers_install", f"INSTALL_HDR_PATH={tmp_path}/hdr")
    assert (tmp_path / "hdr/include/linux/fake.h").is_file()


def test_config_and_build_goals_in_one_make(tree, tmp_path):
    make(tree, tmp_path, "ARCH=i386", "tinyconfig", "bzImage")
    assert elf_machine(tmp_path / "arch/x86/boot/bzImage") == ELF_MACHINE["i386"]


def test_missing_compiler(tree, tmp_path):
    proc = make(tree, tmp_path, "ARCH=arm64", "CROSS_COMPILE=nosuch-", "defconfig", check=False)
    assert proc.returncode != 0
    assert "C compiler 'nosuch-gcc' not found" in proc.stderr
    make(tree, tmp_path, "ARCH=arm64", "defconfig")
    proc = make(tree, tmp_path, "ARCH=arm64", "CROSS_COMPILE=nosuch-", "Image.gz", check=False)
    assert proc.returncode != 0
    assert "nosuch-gcc: not found" in proc.stderr


# --- failure and warning injection --------------------------------------


def test_fail_kernel_is_a_real_compiler_error(tree, x86_build):
    proc = make(tree, x86_build, "ARCH=x86_64", "bzImage", env={"FAIL": "kernel"}, check=False)
    assert proc.returncode == 2
    assert re.search(r"^\S+/scripts/inject/fail\.c:\d+:\d+: error: ", proc.stderr, re.M)
    assert re.search(r"^make: \*\*\* \[.*fail-kernel\.o\] Error 1$", proc.stderr, re.M)
    assert "warning:" not in proc.stderr


def test_warn_kernel_succeeds_with_a_compiler_warning(tree, x86_build):
    proc = make(tree, x86_build, "ARCH=x86_64", "bzImage", env={"WARN": "kernel"})
    assert re.search(r"^\S+/scripts/inject/warn\.c:\d+:\d+: warning: ", proc.stderr, re.M)
    assert "error" not in proc.stderr


def test_fail_list_and_debugkernel(tree, x86_build):
    env = {"FAIL": "debugkernel,modules"}
    # the image still builds; the vmlinux goal and modules fail
    make(tree, x86_build, "ARCH=x86_64", "bzImage", env=env)
    proc = make(tree, x86_build, "ARCH=x86_64", "vmlinux", "modules", env=env, check=False)
    assert proc.returncode == 2
    assert "fail-debugkernel.o] Error 1" in proc.stderr
    assert "fail-modules.o] Error 1" in proc.stderr


@pytest.mark.parametrize(
    ("target", "arch", "goal"),
    [
        ("config", "x86_64", "defconfig"),
        ("dtbs", "arm64", "dtbs"),
        ("headers", "x86_64", "headers_install"),
    ],
)
def test_fail_and_warn_other_targets(tree, tmp_path, target, arch, goal):
    make(tree, tmp_path, f"ARCH={arch}", "defconfig")
    proc = make(tree, tmp_path, f"ARCH={arch}", goal, env={"FAIL": target}, check=False)
    assert proc.returncode == 2 and f"fail-{target}.o] Error 1" in proc.stderr
    assert re.search(r"fail\.c:\d+:\d+: error: ", proc.stderr)
    proc = make(tree, tmp_path, f"ARCH={arch}", goal, env={"WARN": target})
    assert re.search(r"warn\.c:\d+:\d+: warning: ", proc.stderr)


def test_fakelinux_sleep(tree, x86_build):
    start = time.monotonic()
    make(tree, x86_build, "ARCH=x86_64", "bzImage", env={"FAKELINUX_SLEEP": "1"})
    assert time.monotonic() - start >= 1


# --- cross toolchains ---------------------------------------------------


@pytest.mark.parametrize(
    "toolchain",
    [
        pytest.param(["CROSS_COMPILE=aarch64-linux-gnu-"], marks=requires_aarch64_gcc, id="gcc"),
        pytest.param(["LLVM=-16"], marks=requires_clang_16, id="clang-16"),
    ],
)
def test_arm64_cross_build(tree, tmp_path, toolchain):
    make(tree, tmp_path, "ARCH=arm64", *toolchain, "defconfig")
    make(tree, tmp_path, "ARCH=arm64", *toolchain)
    vmlinux = tmp_path / "vmlinux"
    assert elf_machine(vmlinux) == ELF_MACHINE["arm64"]
    if (says := file_says(vmlinux)) is not None:
        assert "aarch64" in says
    assert gzip.decompress((tmp_path / "arch/arm64/boot/Image.gz").read_bytes()) == (
        vmlinux.read_bytes()
    )
    assert elf_machine(tmp_path / "drivers/fake/fake_driver.ko") == ELF_MACHINE["arm64"]
    assert len(list(tmp_path.glob("arch/arm64/boot/dts/fake/*.dtb"))) == 2
    clang = config_of(tmp_path).get("CONFIG_CC_IS_CLANG", "n")
    assert clang == ("y" if toolchain == ["LLVM=-16"] else "n")
