"""Image recipes from the data files: packages, build args and promised tools."""

from __future__ import annotations

import platform

import pytest

from pytest_kbuild import definitions
from pytest_kbuild.cli import images, pipindex
from pytest_kbuild.definitions.targets import Target
from pytest_kbuild.errors import KbuildUserError, UnknownArch, UnknownToolchain

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="package names are those of an x86_64 host"
)


def test_native_gcc_recipe():
    r = images.Recipe.of("x86_64", "gcc")
    assert r.containerfile.name == "gcc.Containerfile" and r.containerfile.is_file()
    assert r.build_args["TOOLCHAIN_PACKAGES"] == "gcc"
    common = r.build_args["COMMON_PACKAGES"].split()
    assert {"make", "libelf-dev", "rsync", "device-tree-compiler"} <= set(common)
    assert set(r.build_args) == {"COMMON_PACKAGES", "TOOLCHAIN_PACKAGES", "PYPI_PACKAGES"}
    assert r.build_args["PYPI_PACKAGES"] == "dtschema==2022.12"
    assert {"PIP_INDEX_URL", "PYPI_PACKAGES"} <= r.declared
    assert r.name() == "localhost/kbuild/x86_64_gcc"
    assert {"make", "bc", "flex", "bison", "depmod", "gcc", "ld"} <= set(r.tools)


def test_cross_clang_recipe_brings_binutils_and_llvm_tools():
    r = images.Recipe.of("arm64", "clang-16")
    assert r.containerfile.name == "clang.Containerfile"
    assert (
        r.build_args["TOOLCHAIN_PACKAGES"] == "clang-16 lld-16 llvm-16 binutils-aarch64-linux-gnu"
    )
    assert {"clang-16", "ld.lld-16", "llvm-ar-16", "llvm-objcopy-16"} <= set(r.tools)
    assert r.name("reg/{toolchain}:{arch}") == "reg/clang-16:arm64"


def test_cross_gcc_version_and_arch_host_tools():
    r = images.Recipe.of("arc", "gcc")
    assert r.build_args["TOOLCHAIN_PACKAGES"].split() == [
        "gcc",
        "gcc-arc-linux-gnu",
        "u-boot-tools",
    ]
    assert {"arc-linux-gnu-gcc", "arc-linux-gnu-ld", "mkimage"} <= set(r.tools)


@pytest.mark.parametrize(
    ("arch", "toolchain", "packages", "tools"),
    [
        ("um", "gcc", ["gcc"], {"gcc", "ld", "objcopy"}),
        ("um", "clang-16", ["clang-16", "lld-16", "llvm-16"], {"clang-16", "ld.lld-16"}),
        (
            "armel",
            "gcc",
            ["gcc", "gcc-arm-linux-gnueabi"],
            {"arm-linux-gnueabi-gcc", "arm-linux-gnueabi-ld"},
        ),
        ("alpha", "gcc", ["gcc", "gcc-alpha-linux-gnu"], {"alpha-linux-gnu-gcc"}),
        ("m68k", "gcc-12", ["gcc-12", "gcc-12-m68k-linux-gnu"], {"m68k-linux-gnu-gcc-12"}),
        (
            "parisc64",
            "gcc",
            ["gcc", "gcc-hppa64-linux-gnu", "gcc-hppa-linux-gnu"],
            {"hppa64-linux-gnu-gcc", "hppa64-linux-gnu-ld"},
        ),
        # No binutils-hexagon-linux-musl: Debian has none, LLVM alone builds hexagon.
        ("hexagon", "clang-16", ["clang-16", "lld-16", "llvm-16"], {"ld.lld-16"}),
        (
            "mips64",
            "gcc",
            ["gcc", "gcc-mips64-linux-gnuabi64"],
            {"mips64-linux-gnuabi64-gcc"},
        ),
        (
            "powerpc64",
            "clang-16",
            ["clang-16", "lld-16", "llvm-16", "binutils-powerpc64-linux-gnu"],
            {"clang-16"},
        ),
        ("powerpc64le", "gcc", ["gcc", "gcc-powerpc64le-linux-gnu"], {"powerpc64le-linux-gnu-gcc"}),
    ],
)
def test_recipes_of_the_new_arches(arch, toolchain, packages, tools):
    r = images.Recipe.of(arch, toolchain)
    assert r.build_args["TOOLCHAIN_PACKAGES"].split() == packages
    assert tools <= set(r.tools)


def test_no_gcc_image_for_a_clang_only_arch():
    with pytest.raises(
        KbuildUserError, match=r"^gcc cannot build arch hexagon \(arch data: gcc: false\)$"
    ):
        images.Recipe.of("hexagon", "gcc")


def test_bad_arch_toolchain_and_engine_name_what_is_accepted():
    with pytest.raises(UnknownArch, match="'arm46'"):
        images.Recipe.of("arm46", "gcc")
    with pytest.raises(UnknownToolchain, match="'gcc-99'"):
        images.Recipe.of("x86_64", "gcc-99")
    with pytest.raises(
        KbuildUserError, match="engine 'lxc' is not known; accepted: docker, podman"
    ):
        images.engine("lxc")


def test_host_mirror_reads_deb822_and_one_line_sources(tmp_path):
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "debian.sources").write_text("Types: deb\nURIs: http://mirror.example/debian\n")
    assert images.host_mirror([d]) == "http://mirror.example/debian"
    one = tmp_path / "sources.list"
    one.write_text("# comment\ndeb [arch=amd64] http://other.example/debian bookworm main\n")
    assert images.host_mirror([tmp_path / "none", one]) == "http://other.example/debian"
    with pytest.raises(KbuildUserError, match="--mirror URL"):
        images.host_mirror([tmp_path / "none"])


def test_the_base_image_has_updates_and_security_as_a_debian_install_has(tmp_path):
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
    )
    assert images.host_security_mirror([d]) == "http://mirror.example/debian-security"
    one = tmp_path / "sources.list"
    one.write_text(
        "deb http://a.example/debian bookworm main\ndeb http://s.example/ds bookworm-security main\n"
    )
    assert images.host_security_mirror([tmp_path / "none", one]) == "http://s.example/ds"
    assert images.host_security_mirror([tmp_path / "none"]) == images.SECURITY_MIRROR
    root = tmp_path / "root"
    (root / "etc/apt").mkdir(parents=True)
    (root / "etc/apt/sources.list").write_text("deb http://mirror.example/debian bookworm main\n")
    images.write_sources(root, "bookworm", "http://m.example/debian", "http://m.example/ds")
    assert not (root / "etc/apt/sources.list").exists()
    text = (root / "etc/apt/sources.list.d/debian.sources").read_text()
    stanzas = text.split("\n\n")
    assert "URIs: http://m.example/debian\nSuites: bookworm bookworm-updates\n" in stanzas[0]
    assert "URIs: http://m.example/ds\nSuites: bookworm-security\n" in stanzas[1]


def _target_tools():
    """tool -> Debian package for every host tool any target may run."""
    out = {}
    for name in definitions.available("target"):
        t = Target.load(name)
        for tools in [t.host_tools, *t.config_tools.values()]:
            out.update(tools)
    return out


@pytest.mark.parametrize("family", ["gcc", "clang"])
def test_every_target_host_tool_is_in_the_curated_images(family):
    recipe = images.Recipe.of("x86_64", "gcc" if family == "gcc" else "clang-16")
    text = recipe.containerfile.read_text()
    assert "${COMMON_PACKAGES}" in text and "${TOOLCHAIN_PACKAGES}" in text
    installed = {p for v in recipe.build_args.values() for p in v.split()}
    tools = _target_tools()
    assert {"rsync", "bzip2", "lzop", "openssl"} <= set(tools)
    assert {p for p in tools.values() if p not in installed} == set()
    assert {t for t in tools if t not in recipe.tools} == set()  # images check looks for them
    libraries = set()
    for name in definitions.available("target"):
        t = Target.load(name)
        libraries |= {*t.packages, *t.skip_without.values()}
    assert {"libdw-dev", "libpci-dev", "rpm"} <= libraries
    assert libraries - installed == set()  # perf, cpupower, kselftest, htmldocs
    pypi = {p for n in definitions.available("target") for p in Target.load(n).pypi_packages}
    assert pypi and pypi <= set(recipe.build_args["PYPI_PACKAGES"].split())  # dtbs_check
    assert "${PYPI_PACKAGES}" in text and "--no-deps" in text


def test_build_context_carries_the_host_pip_index_and_ca(tmp_path):
    recipe = images.Recipe.of("arm64", "clang-16")
    ca = tmp_path / "host-ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    context = tmp_path / "context"
    context.mkdir()
    pip = pipindex.PipIndex("https://mirror.example/simple", ca)
    args = images.build_context(recipe, pip, context)
    assert args["PIP_INDEX_URL"] == "https://mirror.example/simple"
    assert args["PYPI_PACKAGES"] == "dtschema==2022.12"
    assert (context / images.PIP_CA).read_text() == ca.read_text()
    copied = context / recipe.containerfile.name
    assert copied.read_text() == recipe.containerfile.read_text()
    assert f"COPY {images.PIP_CA} " in copied.read_text()


def test_build_context_without_host_pip_settings(tmp_path):
    recipe = images.Recipe.of("x86_64", "gcc")
    args = images.build_context(recipe, pipindex.PipIndex(), tmp_path)
    assert "PIP_INDEX_URL" not in args
    assert (tmp_path / images.PIP_CA).read_bytes() == b""  # the image's own CAs
