import dataclasses
import re

import pytest

from pytest_kbuild import definitions
from pytest_kbuild.definitions import toolchain
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.definitions.toolchain import Toolchain, Wrapper
from pytest_kbuild.errors import (
    DefinitionError,
    KbuildUserError,
    ToolchainDirError,
    UnknownToolchain,
    UnknownWrapper,
)
from tests.support import gcc_dir, llvm_dir, old_gcc_dir

ARCHES = definitions.available("arch")
FAMILIES = definitions.available("toolchain")
WRAPPERS = definitions.available("wrapper")
TOOLCHAIN_KEYS = {
    "versions",
    "compiler",
    "makevars",
    "arch_makevars",
    "requires_arch",
    "debian_packages",
    "cross_debian_packages",
    "arch_debian_packages",
    "min_tool",
    "directory",
}
DIRECTORY_KEYS = {
    "name",
    "compilers",
    "version_args",
    "find_prefix",
    "compiler",
    "makevars",
    "arch_makevars",
}
WRAPPER_KEYS = {f.name for f in dataclasses.fields(Wrapper)} - {"name"}
DEBIAN_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")  # Debian policy 5.6.1
FOREIGN = "vax"  # a machine no arch is native on: every arch is cross-compiled
X86 = Arch.load("x86_64")


def _arch_params():
    yield from ARCHES


# -- toolchain names ------------------------------------------------------------------


def test_every_known_name_loads():
    for name in toolchain.known():
        t = Toolchain.load(name)
        assert t.name == name
        assert t.family in FAMILIES
        assert name == t.family or name == f"{t.family}-{t.version}"


def test_known_lists_families_and_versions():
    names = toolchain.known()
    for family in FAMILIES:
        assert family in names
    assert "gcc-12" in names
    assert "clang-16" in names


@pytest.mark.parametrize(
    ("name", "family", "version"),
    [
        ("gcc", "gcc", ""),
        ("gcc-12", "gcc", "12"),
        ("clang", "clang", ""),
        ("clang-16", "clang", "16"),
    ],
)
def test_load(name, family, version):
    t = Toolchain.load(name)
    assert (t.name, t.family, t.version) == (name, family, version)


@pytest.mark.parametrize("name", ["icc", "gcc-99", "GCC", "gcc-", "gcc-12-x", "", "clang16"])
def test_unknown_toolchain_message(name):
    with pytest.raises(UnknownToolchain) as exc:
        Toolchain.load(name, "toolchain")
    msg = str(exc.value)
    assert msg.startswith(f"toolchain: unknown toolchain {name!r}; known: ")
    assert "gcc-12" in msg and "clang-16" in msg
    assert exc.value.name == name


def test_version_with_leading_zero_is_normalised_or_rejected():
    try:
        t = Toolchain.load("gcc-012")
    except UnknownToolchain:
        return
    assert t.name in toolchain.known()


@pytest.mark.parametrize("family", FAMILIES)
def test_toolchain_files_have_no_unknown_keys(family):
    d = definitions.load("toolchain", family)
    assert set(d.fields) <= TOOLCHAIN_KEYS, f"{d.path}: unknown keys"
    section = d.fields.get("directory", {})
    assert set(section) <= DIRECTORY_KEYS, f"{d.path}: unknown directory: keys"
    if section.get("arch_makevars"):
        assert isinstance(getattr(X86, section["arch_makevars"]), dict)
    flag = definitions.optional(d, "requires_arch", str, "")
    if flag:
        assert isinstance(getattr(X86, flag), bool), f"{d.path}: requires_arch {flag!r}"
    extra = definitions.optional(d, "arch_makevars", str, "")
    if extra:
        assert isinstance(getattr(X86, extra), dict), f"{d.path}: arch_makevars {extra!r}"
    assert all(isinstance(v, int) for v in definitions.optional(d, "versions", list, []))


# -- every toolchain file x every arch file ---------------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_templates_expand_for_every_arch(arch):
    a = Arch.load(arch)
    for family in FAMILIES:
        d = definitions.load("toolchain", family)
        versions = definitions.optional(d, "versions", list, [])
        for name in [family] + [f"{family}-{v}" for v in versions[-1:]]:
            t = Toolchain.load(name)
            for machine in ("x86_64", FOREIGN):
                for wrapper in WRAPPERS:
                    mv = t.makevars(a, Wrapper.load(wrapper), machine)
                    assert mv["ARCH"] == a.makevars["ARCH"]
                    assert mv.get("CROSS_COMPILE", "") == a.cross_compile_for(machine)
                    assert "{" not in " ".join(mv.values())
                assert t.compiler(a, machine)
                assert t.debian_packages(a, machine)


@pytest.mark.parametrize("arch", list(_arch_params()))
def test_debian_package_hints_are_valid_names(arch):
    for name in ("clang-16", "gcc", "gcc-12"):
        pkgs = Toolchain.load(name).debian_packages(Arch.load(arch), FOREIGN)
        bad = [p for p in pkgs if not DEBIAN_PACKAGE.match(p)]
        assert not bad


@pytest.mark.parametrize("arch", ARCHES)
def test_supports_follows_the_arch_clang_and_gcc_flags(arch):
    a = Arch.load(arch)
    reason = Toolchain.load("gcc-12").supports(a)
    if a.gcc:
        assert reason is None
    else:
        assert reason == f"gcc-12 cannot build arch {arch} (arch data: gcc: false)"
    reason = Toolchain.load("clang-16").supports(a)
    if a.clang:
        assert reason is None
    else:
        assert reason == f"clang-16 cannot build arch {arch} (arch data: clang: false)"


def test_supports_reason_for_an_arch_without_clang():
    noclang = dataclasses.replace(X86, name="fakearch", clang=False)
    assert Toolchain.load("clang").supports(noclang) == (
        "clang cannot build arch fakearch (arch data: clang: false)"
    )
    assert Toolchain.load("gcc-12").supports(noclang) is None


# -- make variables, compiler, packages -------------------------------------------------

NONE = Wrapper.load("none")


def test_gcc_native():
    assert Toolchain.load("gcc").makevars(X86, NONE, "x86_64") == {
        "ARCH": "x86_64",
        "CC": "gcc",
        "HOSTCC": "gcc",
    }
    assert Toolchain.load("gcc").compiler(X86, "x86_64") == "gcc"
    assert Toolchain.load("gcc").debian_packages(X86, "x86_64") == ["gcc"]


def test_gcc_versioned_cross():
    t = Toolchain.load("gcc-12")
    assert t.makevars(X86, NONE, FOREIGN) == {
        "ARCH": "x86_64",
        "CROSS_COMPILE": "x86_64-linux-gnu-",
        "CC": "x86_64-linux-gnu-gcc-12",
        "HOSTCC": "gcc-12",
    }
    assert t.compiler(X86, FOREIGN) == "x86_64-linux-gnu-gcc-12"
    assert t.debian_packages(X86, FOREIGN)[0] == "gcc-12"


def test_gcc_cross_package_for_x86_64():
    assert Toolchain.load("gcc-12").debian_packages(X86, FOREIGN) == [
        "gcc-12",
        "gcc-12-x86-64-linux-gnu",
    ]


def test_gcc_with_ccache():
    mv = Toolchain.load("gcc").makevars(X86, Wrapper.load("ccache"), "x86_64")
    assert mv["CC"] == "ccache gcc"
    assert mv["HOSTCC"] == "ccache gcc"


def test_clang():
    mv = Toolchain.load("clang").makevars(X86, NONE, "x86_64")
    assert mv == {"ARCH": "x86_64", "LLVM": "1", "CC": "clang", "HOSTCC": "clang"}
    assert Toolchain.load("clang").compiler(X86, "x86_64") == "clang"


def test_clang_versioned_cross_with_sccache():
    t = Toolchain.load("clang-16")
    mv = t.makevars(X86, Wrapper.load("sccache"), FOREIGN)
    assert mv["LLVM"] == "-16"
    assert mv["CC"] == "sccache clang-16"
    assert mv["CROSS_COMPILE"] == "x86_64-linux-gnu-"  # Kbuild derives --target from it
    assert t.compiler(X86, FOREIGN) == "clang-16"
    # a cross build may run GNU as/ld/objcopy (powerpc and s390 do)
    assert t.debian_packages(X86, FOREIGN) == [
        "clang-16",
        "lld-16",
        "llvm-16",
        "binutils-x86-64-linux-gnu",
    ]


def test_clang_adds_arch_clang_makevars_and_gcc_does_not():
    a = dataclasses.replace(X86, clang_makevars={"LLVM_IAS": "0"})
    assert Toolchain.load("clang").makevars(a, NONE, "x86_64")["LLVM_IAS"] == "0"
    assert "LLVM_IAS" not in Toolchain.load("gcc").makevars(a, NONE, "x86_64")


def test_arch_clang_makevars_expand_placeholders():
    a = dataclasses.replace(X86, clang_makevars={"LD": "{cross_compile}ld"})
    assert Toolchain.load("clang").makevars(a, NONE, FOREIGN)["LD"] == "x86_64-linux-gnu-ld"
    assert Toolchain.load("clang").makevars(a, NONE, "x86_64")["LD"] == "ld"


def test_arch_clang_makevars_bad_placeholder_names_the_arch_file():
    a = dataclasses.replace(X86, clang_makevars={"LD": "{nope}ld"})
    with pytest.raises(DefinitionError, match=r"x86_64\.yaml: unknown placeholder \{nope\}"):
        Toolchain.load("clang").makevars(a, NONE, "x86_64")


# -- wrappers -------------------------------------------------------------------------


@pytest.mark.parametrize("name", WRAPPERS)
def test_every_wrapper_file(name):
    w = Wrapper.load(name)
    assert w.name == name
    d = definitions.load("wrapper", name)
    assert set(d.fields) <= WRAPPER_KEYS, f"{d.path}: unknown keys"
    env = w.environment("/build", "/cache")
    assert all("{" not in v for v in env.values())
    if w.command:
        assert w.debian_packages, f"{d.path}: a wrapper needs debian_packages for the hint"


def test_wrapper_environments():
    assert Wrapper.load("none").command == ""
    assert Wrapper.load("none").environment("/b", "/c") == {}
    assert Wrapper.load("ccache").environment("/b", "/c") == {
        "CCACHE_STATSLOG": "/b/ccache-stats.log",
        "CCACHE_DIR": "/c",
    }
    assert Wrapper.load("ccache").environment("/b", None) == {
        "CCACHE_STATSLOG": "/b/ccache-stats.log"
    }
    assert Wrapper.load("sccache").environment("/b", "/c") == {"SCCACHE_DIR": "/c"}


def test_unknown_wrapper_message():
    with pytest.raises(UnknownWrapper) as exc:
        Wrapper.load("distcc", "wrapper")
    assert str(exc.value) == (
        f"wrapper: unknown wrapper 'distcc'; known: {', '.join(sorted(WRAPPERS))}"
    )


def test_wrapper_bad_placeholder_is_a_definition_error():
    w = dataclasses.replace(Wrapper.load("ccache"), env={"X": "{nope}"})
    with pytest.raises(DefinitionError, match=r"ccache\.yaml: unknown placeholder \{nope\}"):
        w.environment("/b", None)


def test_wrapper_remote_environment():
    url = "redis://127.0.0.1:6379"
    assert Wrapper.load("ccache").environment("/b", None, url)["CCACHE_REMOTE_STORAGE"] == url
    assert Wrapper.load("sccache").environment("/b", None, url) == {
        "SCCACHE_REDIS": url,
        "SCCACHE_REDIS_ENDPOINT": url,
    }
    assert Wrapper.load("none").environment("/b", "/c", url) == {}


def test_wrapper_default_environment():
    assert Wrapper.load("ccache").default_environment("/b") == {
        "CCACHE_NOHASHDIR": "1",
        "CCACHE_COMPILERCHECK": "content",
    }
    assert Wrapper.load("none").default_environment("/b") == {}


def test_wrapper_counts_sum_counter_lines():
    log = "# a.c\ndirect_cache_hit\nremote_storage_hit\n# b.c\ncache_miss\n\n# c.c\n"
    log += "preprocessed_cache_hit\nlocal_storage_hit\nremote_storage_timeout\n"
    assert Wrapper.load("ccache").counts(log) == {
        "hits": 2,
        "misses": 1,
        "local_hits": 1,
        "remote_hits": 1,
        "remote_errors": 1,
    }
    assert Wrapper.load("sccache").counts(log) == {}


def test_check_remote():
    Wrapper.load("ccache").check_remote("redis+unix:///run/redis.sock", "x")
    Wrapper.load("none").check_remote("s3://anything", "x")  # no cache, nothing to check
    ccache = dataclasses.replace(Wrapper.load("ccache"), remote_env=())
    with pytest.raises(KbuildUserError) as exc:
        ccache.check_remote("redis://h", "--kbuild-cache-remote")
    assert str(exc.value) == "--kbuild-cache-remote: wrapper ccache has no remote storage"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://h:6379", "redis://h:6379"),
        ("redis://:pw@h:6379/0", "redis://:***@h:6379/0"),
        ("http://user:pw@h/c|layout=bazel", "http://user:***@h/c|layout=bazel"),
    ],
)
def test_redact(url, shown):
    assert toolchain.redact(url) == shown


def test_bad_counters_are_a_definition_error(data_dir):
    (data_dir / "wrapper" / "w.yaml").write_text("command: w\ncounters: {hits: direct_cache_hit}\n")
    toolchain._load_wrapper.cache_clear()
    with pytest.raises(DefinitionError, match=r"w\.yaml: 'counters' must map names to lists"):
        Wrapper.load("w")
    toolchain._load_wrapper.cache_clear()


# -- kernel conventions: compat vDSO, a user's CROSS_COMPILE ------------------------------

ARM64 = Arch.load("arm64")


def test_arm64_gcc_sets_cross_compile_compat_for_the_compat_vdso():
    for name in ("gcc", "gcc-12"):
        t = Toolchain.load(name)
        assert t.makevars(ARM64, NONE, "x86_64")["CROSS_COMPILE_COMPAT"] == "arm-linux-gnueabihf-"
        # an arm64 machine still cross-compiles the 32-bit vDSO
        assert t.makevars(ARM64, NONE, "aarch64")["CROSS_COMPILE_COMPAT"] == "arm-linux-gnueabihf-"
        assert "gcc-arm-linux-gnueabihf" in t.debian_packages(ARM64, "x86_64")


def test_clang_builds_the_compat_vdso_itself():
    # arch/arm64/kernel/vdso32/Makefile: CC_COMPAT = $(CC) --target=arm-linux-gnueabi with LLD
    t = Toolchain.load("clang-16")
    assert "CROSS_COMPILE_COMPAT" not in t.makevars(ARM64, NONE, "x86_64")
    assert "gcc-arm-linux-gnueabihf" not in t.debian_packages(ARM64, "x86_64")


def test_no_other_arch_sets_a_compat_prefix():
    # powerpc's CROSS32_COMPILE is optional (a biarch compiler builds the boot wrapper),
    # mips builds its o32 vDSO with the same compiler (-mabi=32); only arm64 needs one.
    for name in ARCHES:
        mv = Toolchain.load("gcc").makevars(Arch.load(name), NONE, FOREIGN)
        assert ("CROSS_COMPILE_COMPAT" in mv) == (name == "arm64"), name


@pytest.mark.parametrize("name", ["gcc", "gcc-12", "clang-16"])
def test_a_users_cross_compile_is_the_prefix_of_cc_too(name):
    t = Toolchain.load(name)
    mv = t.makevars(ARM64, NONE, FOREIGN, cross_compile="/opt/tc/bin/aarch64-none-linux-gnu-")
    assert mv["CROSS_COMPILE"] == "/opt/tc/bin/aarch64-none-linux-gnu-"
    if t.family == "gcc":
        assert mv["CC"] == f"/opt/tc/bin/aarch64-none-linux-gnu-gcc{'-12' * (name == 'gcc-12')}"
        assert t.compiler(ARM64, FOREIGN, "/opt/tc/bin/aarch64-none-linux-gnu-") == mv["CC"]
    assert "aarch64-linux-gnu-" not in " ".join(mv.values())


def test_an_empty_cross_compile_builds_with_the_native_names():
    mv = Toolchain.load("gcc").makevars(ARM64, NONE, FOREIGN, cross_compile="")
    assert mv["CROSS_COMPILE"] == "" and mv["CC"] == "gcc"


# -- Debian packages an arch's own data changes ---------------------------------------------


def test_hexagon_clang_needs_no_binutils_and_gcc_cannot_build_it():
    hexagon = Arch.load("hexagon")
    assert Toolchain.load("clang-16").debian_packages(hexagon, FOREIGN) == [
        "clang-16",
        "lld-16",
        "llvm-16",
    ]
    assert Toolchain.load("gcc").supports(hexagon) == (
        "gcc cannot build arch hexagon (arch data: gcc: false)"
    )


def test_parisc64_gcc_brings_the_32_bit_compiler_for_the_vdso():
    parisc64 = Arch.load("parisc64")
    assert Toolchain.load("gcc-12").debian_packages(parisc64, FOREIGN) == [
        "gcc-12",
        "gcc-12-hppa64-linux-gnu",
        "gcc-hppa-linux-gnu",
    ]


@pytest.mark.parametrize(
    ("arch", "package"),
    [
        ("armel", "gcc-arm-linux-gnueabi"),
        ("alpha", "gcc-alpha-linux-gnu"),
        ("m68k", "gcc-m68k-linux-gnu"),
        ("mips64", "gcc-mips64-linux-gnuabi64"),
        ("powerpc64", "gcc-powerpc64-linux-gnu"),
        ("powerpc64le", "gcc-powerpc64le-linux-gnu"),
        ("um", "gcc-x86-64-linux-gnu"),
    ],
)
def test_cross_gcc_package_of_each_new_arch(arch, package):
    assert Toolchain.load("gcc").debian_packages(Arch.load(arch), FOREIGN) == ["gcc", package]


def test_um_is_built_with_the_host_compiler_on_x86_64():
    um = Arch.load("um")
    assert Toolchain.load("gcc").debian_packages(um, "x86_64") == ["gcc"]
    mv = Toolchain.load("clang-16").makevars(um, Wrapper.load("none"), "x86_64")
    assert mv["ARCH"] == "um" and mv["SUBARCH"] == "x86_64" and "CROSS_COMPILE" not in mv
    assert mv["LLVM"] == "-16"
    # Makefile.clang has no CLANG_TARGET_FLAGS_x86_64 for SUBARCH=x86_64: the data names it.
    assert mv["CLANG_TARGET_FLAGS_um"] == "x86_64-linux-gnu"
    # Makefile.clang has no CLANG_TARGET_FLAGS_x86_64 for SUBARCH=x86_64: the data names it.
    assert mv["CLANG_TARGET_FLAGS_um"] == "x86_64-linux-gnu"


# -- toolchains from a directory (llvm@DIR, gcc@DIR) -------------------------------------

ARM64 = Arch.load("arm64")


@pytest.fixture
def llvm(tmp_path):
    return llvm_dir(tmp_path / "llvm-16" / "bin")


@pytest.fixture
def korg_gcc(tmp_path):
    """A directory laid out as kernel.org's aarch64 crosstool: aarch64-linux-gcc..."""
    return gcc_dir(tmp_path / "gcc-12-nolibc" / "aarch64-linux" / "bin")


def test_llvm_directory_is_named_by_its_probed_major_version(llvm):
    t = Toolchain.load(f"llvm@{llvm}")
    assert (t.name, t.family, t.version, t.directory) == ("llvm-16", "clang", "", str(llvm))
    assert t.release.startswith("16.")
    assert t.spec_name == f"llvm-16@{llvm}"
    assert Toolchain.load(t.spec_name) == t  # the spec's name loads the same toolchain


def test_a_named_directory_keeps_its_name(llvm):
    t = Toolchain.load(f"llvm-mine@{llvm}")
    assert t.name == "llvm-mine" and t.release.startswith("16.")


def test_llvm_directory_uses_the_kernels_llvm_prefix_convention(llvm):
    t = Toolchain.load(f"llvm@{llvm}")
    assert t.makevars(ARM64, Wrapper.load("none"), "x86_64") == {
        "ARCH": "arm64",
        "CROSS_COMPILE": "aarch64-linux-gnu-",  # for clang's --target only
        "LLVM": f"{llvm}/",
        "CC": f"{llvm}/clang",
        "HOSTCC": f"{llvm}/clang",
    }
    assert t.compiler(ARM64) == f"{llvm}/clang"
    assert t.makevars(ARM64, Wrapper.load("ccache"))["CC"] == f"ccache {llvm}/clang"
    ppc = t.makevars(Arch.load("powerpc64le"), Wrapper.load("none"), FOREIGN)
    assert ppc["LD"] == "powerpc64le-linux-gnu-ld"  # the arch's clang_makevars still apply
    assert t.debian_packages(ARM64) == []
    assert t.describe(ARM64)["path"] == str(llvm)
    assert (
        t.supports(Arch.load("alpha"))
        == "llvm-16 cannot build arch alpha (arch data: clang: false)"
    )


def test_gcc_directory_finds_kernel_orgs_prefix(korg_gcc):
    t = Toolchain.load(f"gcc@{korg_gcc}")
    assert (t.name, t.family) == (f"gcc-{t.release.split('.')[0]}", "gcc")
    mv = t.makevars(ARM64, Wrapper.load("none"), "x86_64")
    assert mv == {
        "ARCH": "arm64",
        "CROSS_COMPILE": f"{korg_gcc}/aarch64-linux-",
        "CC": f"{korg_gcc}/aarch64-linux-gcc",
        "HOSTCC": "gcc",  # host programs: the host's compiler, as Kbuild's default
    }  # and no CROSS_COMPILE_COMPAT: the directory brings its own compilers only
    assert t.compiler(ARM64, "x86_64") == f"{korg_gcc}/aarch64-linux-gcc"
    assert t.candidates(ARM64, "x86_64") == [
        f"{korg_gcc}/aarch64-linux-gnu-gcc",
        f"{korg_gcc}/aarch64-linux-gcc",
    ]


def test_gcc_directory_prefers_debians_prefix(tmp_path):
    both = gcc_dir(tmp_path / "bin", prefix="aarch64-linux-gnu-")
    gcc_dir(both, prefix="aarch64-linux-")
    mv = Toolchain.load(f"gcc@{both}").makevars(ARM64, Wrapper.load("none"), "x86_64")
    assert mv["CROSS_COMPILE"] == f"{both}/aarch64-linux-gnu-"


def test_gcc_directory_on_the_native_arch_takes_a_plain_gcc(tmp_path):
    native = old_gcc_dir(tmp_path / "bin", "13.2.0")
    t = Toolchain.load(f"gcc@{native}")
    assert t.name == "gcc-13"
    mv = t.makevars(X86, Wrapper.load("none"), "x86_64")
    assert mv == {"ARCH": "x86_64", "CC": f"{native}/gcc", "HOSTCC": "gcc"}
    assert t.candidates(X86, "x86_64")[:2] == [f"{native}/gcc", f"{native}/x86_64-linux-gnu-gcc"]
    assert t.candidates(X86, FOREIGN)[0] == f"{native}/x86_64-linux-gnu-gcc"


def test_gcc_directory_without_the_arch_compiler_names_the_first_looked_for(korg_gcc):
    t = Toolchain.load(f"gcc@{korg_gcc}")
    riscv = Arch.load("riscv")
    assert t.compiler(riscv, "x86_64") == f"{korg_gcc}/riscv64-linux-gnu-gcc"
    assert t.candidates(riscv, "x86_64") == [
        f"{korg_gcc}/riscv64-linux-gnu-gcc",
        f"{korg_gcc}/riscv64-linux-gcc",
    ]


def test_a_users_cross_compile_wins_over_the_directorys_prefix(korg_gcc):
    t = Toolchain.load(f"gcc@{korg_gcc}")
    mv = t.makevars(ARM64, Wrapper.load("none"), "x86_64", cross_compile="/x/aarch64-elf-")
    assert (mv["CROSS_COMPILE"], mv["CC"]) == ("/x/aarch64-elf-", "/x/aarch64-elf-gcc")


def test_a_relative_directory_is_relative_to_the_base_dir(llvm):
    t = Toolchain.load("llvm@bin", base_dir=llvm.parent)
    assert t.directory == str(llvm)


@pytest.mark.parametrize("arch", ARCHES)
def test_every_gcc_arch_has_kernel_orgs_prefix(arch):
    a = Arch.load(arch)
    if a.gcc:
        assert a.korg_cross_compile.endswith("-linux-") or a.korg_cross_compile.endswith(
            "-linux-gnueabi-"
        ), a.korg_cross_compile
        # each once: armel's Debian prefix is kernel.org's too
        assert a.cross_prefixes() == tuple(dict.fromkeys([a.cross_compile, a.korg_cross_compile]))


def test_a_missing_directory_says_what_it_should_hold(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(ToolchainDirError) as exc:
        Toolchain.load(f"llvm@{missing}", "toolchain")
    assert str(exc.value) == (
        f"toolchain: toolchain 'llvm@{missing}': {missing} is not a directory; "
        "llvm@DIR names a directory holding clang"
    )
    assert exc.value.directory == str(missing)


def test_a_directory_without_the_compiler_names_the_files_expected(tmp_path):
    with pytest.raises(ToolchainDirError) as exc:
        Toolchain.load(f"gcc@{tmp_path}")
    assert str(exc.value) == (
        f"toolchain 'gcc@{tmp_path}': {tmp_path} holds no gcc compiler: "
        f"expected {tmp_path}/gcc or {tmp_path}/*-gcc"
    )
    with pytest.raises(ToolchainDirError, match=f"expected {tmp_path}/clang$"):
        Toolchain.load(f"llvm@{tmp_path}")


def test_a_compiler_that_does_not_run_is_an_error_naming_it(tmp_path):
    (tmp_path / "clang").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "clang").chmod(0o755)
    with pytest.raises(ToolchainDirError) as exc:
        Toolchain.load(f"llvm@{tmp_path}")
    assert str(exc.value) == (
        f"toolchain 'llvm@{tmp_path}': its compiler does not work: "
        f"`{tmp_path}/clang --version` exited with status 1"
    )


@pytest.mark.parametrize("name", ["clang@/opt", "foo@/opt", "llvm@", "llvm-@/opt", "@/opt"])
def test_a_bad_directory_form_says_what_is_accepted(name):
    with pytest.raises(UnknownToolchain) as exc:
        Toolchain.load(name, "toolchain")
    assert str(exc.value).startswith(f"toolchain: unknown toolchain {name!r}; known: clang, ")
    assert str(exc.value).endswith(
        "; a toolchain from a directory is gcc@DIR or llvm@DIR (e.g. llvm@/opt/llvm-21/bin)"
    )


def test_an_unknown_version_says_which_are_debians_and_how_to_use_another():
    with pytest.raises(UnknownToolchain) as exc:
        Toolchain.load("clang-22", "toolchain")
    assert str(exc.value).endswith(
        "; clang-N is Debian's package for N in 10..19; for another, give its directory: "
        "a toolchain from a directory is gcc@DIR or llvm@DIR (e.g. llvm@/opt/llvm-21/bin)"
    )


def test_directory_families_are_data():
    assert toolchain.directory_families() == {"gcc": "gcc", "llvm": "clang"}
    assert toolchain.id_name("llvm-21@/opt/llvm-21/bin") == "llvm-21"
    assert toolchain.id_name("gcc-12") == "gcc-12"
