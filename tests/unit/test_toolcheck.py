"""check_target_tools: a target's host tools, from its data file and the .config."""

import dataclasses

import pytest
from fakes import FakeRuntime

from pytest_kbuild.build.toolcheck import check_target_tools, check_tools, check_version
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.definitions.targets import Target
from pytest_kbuild.definitions.toolchain import Toolchain, Wrapper
from pytest_kbuild.errors import KbuildInfraError, ToolNotFound, ToolTooOld
from pytest_kbuild.runtime.local import LocalRuntime
from tests.support import gcc_dir, llvm_dir, old_gcc_dir


@dataclasses.dataclass
class ImageRuntime(FakeRuntime):
    """A FakeRuntime that describes itself as a container runtime with an image."""

    def describe(self):
        return {"name": self.name, "image": {"reference": "localhost/kbuild/x86_64_gcc"}}


def test_every_tool_present_passes(tmp_path):
    for name in ("config", "kernel", "modules", "dtbs", "headers"):
        check_target_tools(FakeRuntime(), Target.load(name), tmp_path)


def test_missing_rsync_names_target_tool_and_package(tmp_path):
    with pytest.raises(ToolNotFound) as exc:
        check_target_tools(FakeRuntime(missing={"rsync"}), Target.load("headers"), tmp_path)
    assert str(exc.value) == (
        "target headers (runtime fake): 'rsync' not found on PATH; on Debian install: rsync"
    )
    assert exc.value.tool == "rsync"
    assert isinstance(exc.value, KbuildInfraError)


def test_in_a_container_the_hint_is_about_the_image(tmp_path):
    rt = ImageRuntime(name="podman", missing={"rsync"})
    with pytest.raises(ToolNotFound) as exc:
        check_target_tools(rt, Target.load("headers"), tmp_path)
    assert str(exc.value) == (
        "target headers (runtime podman): 'rsync' not found on PATH; the image "
        "localhost/kbuild/x86_64_gcc lacks it: add the Debian packages rsync to it "
        "(see pytest-kbuild images build/check)"
    )


@pytest.mark.parametrize(
    ("option", "tool", "package"),
    [
        ("CONFIG_KERNEL_BZIP2=y", "bzip2", "bzip2"),
        ("CONFIG_KERNEL_LZO=y", "lzop", "lzop"),
        ("CONFIG_KERNEL_LZ4=y", "lz4", "lz4"),
        ("CONFIG_KERNEL_ZSTD=y", "zstd", "zstd"),
        ("CONFIG_KERNEL_XZ=y", "xz", "xz-utils"),
        ("CONFIG_KERNEL_LZMA=y", "lzma", "xz-utils"),
    ],
)
def test_kernel_compression_tool_from_the_config(tmp_path, option, tool, package):
    rt = FakeRuntime(missing={tool})
    check_target_tools(rt, Target.load("kernel"), tmp_path)  # no .config yet: not needed
    (tmp_path / ".config").write_text(f"CONFIG_64BIT=y\n{option}\n")
    with pytest.raises(ToolNotFound) as exc:
        check_target_tools(rt, Target.load("kernel"), tmp_path)
    assert str(exc.value) == (
        f"target kernel, for {option} in the .config (runtime fake): "
        f"{tool!r} not found on PATH; on Debian install: {package}"
    )


def test_an_option_that_is_not_set_needs_nothing(tmp_path):
    (tmp_path / ".config").write_text("# CONFIG_KERNEL_LZO is not set\nCONFIG_KERNEL_GZIP=y\n")
    check_target_tools(FakeRuntime(missing={"lzop"}), Target.load("kernel"), tmp_path)


def test_without_a_build_dir_only_the_host_tools_count():
    check_target_tools(FakeRuntime(missing={"lzop"}), Target.load("kernel"), None)
    with pytest.raises(ToolNotFound, match="'bc' not found"):
        check_target_tools(FakeRuntime(missing={"bc"}), Target.load("kernel"), None)


ARM64, GCC, NONE = Arch.load("arm64"), Toolchain.load("gcc"), Wrapper.load("none")
X86 = Arch.load("x86_64")


def test_a_missing_compat_vdso_compiler_says_what_to_install_or_set():
    mv = GCC.makevars(ARM64, NONE, "x86_64")
    rt = FakeRuntime(missing={"arm-linux-gnueabihf-gcc"})
    with pytest.raises(ToolNotFound) as exc:
        check_tools(rt, ARM64, GCC, NONE, mv)
    assert exc.value.tool == "arm-linux-gnueabihf-gcc"
    assert "CROSS_COMPILE_COMPAT= turns it off" in str(exc.value)
    assert str(exc.value).endswith("on Debian install: gcc-arm-linux-gnueabihf")
    check_tools(rt, ARM64, GCC, NONE, {**mv, "CROSS_COMPILE_COMPAT": ""})  # turned off


def test_a_users_cross_compile_is_the_compiler_checked():
    rt = FakeRuntime(missing={"/opt/tc/bin/aarch64-none-linux-gnu-gcc"})
    with pytest.raises(ToolNotFound) as exc:
        check_tools(rt, ARM64, GCC, NONE, {"CROSS_COMPILE": "/opt/tc/bin/aarch64-none-linux-gnu-"})
    assert "with CROSS_COMPILE=/opt/tc/bin/aarch64-none-linux-gnu-" in str(exc.value)
    assert "on Debian install" not in str(exc.value)  # not a Debian toolchain


# -- toolchains from a directory ----------------------------------------------------------


def test_a_gcc_directory_without_the_arch_compiler_names_what_was_looked_for(tmp_path):
    korg = gcc_dir(tmp_path / "bin")  # aarch64-linux-gcc only
    tc = Toolchain.load(f"gcc@{korg}")
    riscv = Arch.load("riscv")
    rt = LocalRuntime()
    with pytest.raises(ToolNotFound) as exc:
        check_tools(rt, riscv, tc, NONE, tc.makevars(riscv, NONE))
    assert str(exc.value) == (
        f"toolchain {tc.spec_name} for riscv (runtime local): "
        f"'{korg}/riscv64-linux-gnu-gcc' not found in {korg}; looked for "
        f"{korg}/riscv64-linux-gnu-gcc, {korg}/riscv64-linux-gcc "
        "(the riscv compiler as Debian, then kernel.org name it)"
    )
    check_tools(rt, ARM64, tc, NONE, tc.makevars(ARM64, NONE))  # its own arch builds


def test_an_llvm_directory_the_runtime_lacks_is_an_error_naming_it(tmp_path):
    llvm = llvm_dir(tmp_path / "bin")
    tc = Toolchain.load(f"llvm@{llvm}")
    rt = FakeRuntime(missing={f"{llvm}/clang"})  # a container without the mount
    with pytest.raises(ToolNotFound) as exc:
        check_tools(rt, ARM64, tc, NONE, tc.makevars(ARM64, NONE))
    assert str(exc.value) == (
        f"toolchain llvm-16@{llvm} for arm64 (runtime fake): '{llvm}/clang' not found "
        f"in {llvm}; looked for {llvm}/clang"
    )


def test_a_compiler_older_than_the_tree_wants_names_both_versions(tmp_path):
    old = Toolchain.load(f"gcc@{old_gcc_dir(tmp_path / 'bin')}")
    tree = tmp_path / "linux"
    with pytest.raises(ToolTooOld) as exc:
        check_version(old, X86, tree, {"version_number": "4.9.4", "minimum_version": "5.1.0"})
    assert str(exc.value) == (
        f"toolchain gcc-4@{tmp_path}/bin for x86_64: version 4.9.4 is older than 5.1.0, the "
        f"minimum the tree {tree} (its scripts/min-tool-version.sh gcc) accepts; "
        "use a newer compiler"
    )
    assert isinstance(exc.value, KbuildInfraError)
    assert (exc.value.version, exc.value.minimum) == ("4.9.4", "5.1.0")
    check_version(
        old, X86, tree, {"version_number": "5.1", "minimum_version": "5.1.0"}
    )  # as old as allowed
    check_version(
        old, X86, tree, {"version_number": None, "minimum_version": "5.1.0"}
    )  # nothing to compare
    check_version(
        old, X86, tree, {"version_number": "4.9.4", "minimum_version": None}
    )  # a tree without the script
