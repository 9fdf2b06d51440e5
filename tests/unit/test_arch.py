import dataclasses
import posixpath
import re

import pytest

from pytest_kbuild import definitions
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.errors import DefinitionError, UnknownArch
from pytest_kbuild.kconfig import parse_literal

ARCHES = definitions.available("arch")
FIELDS = {f.name for f in dataclasses.fields(Arch)} - {"name"}

# The arches the project ships (data/arch/<name>.yaml) and aliases users type.
EXPECTED_ARCHES = [
    "alpha",
    "arc",
    "arm",
    "arm64",
    "armel",
    "hexagon",
    "i386",
    "m68k",
    "mips",
    "mips64",
    "parisc",
    "parisc64",
    "powerpc",
    "powerpc64",
    "powerpc64le",
    "riscv",
    "s390",
    "sh",
    "sparc",
    "um",
    "x86_64",
]
EXPECTED_ALIASES = {
    "aarch64": "arm64",
    "amd64": "x86_64",
    "armv5": "armel",
    "hppa64": "parisc64",
    "ppc64": "powerpc64",
    "ppc64le": "powerpc64le",
    "uml": "um",
}
DEBIAN_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")  # Debian policy 5.6.1


def test_expected_arches_and_aliases_resolve():
    missing = [a for a in EXPECTED_ARCHES if definitions.canonical("arch", a) != a]
    assert not missing, f"no data/arch/<name>.yaml for: {', '.join(missing)}"
    for alias, name in EXPECTED_ALIASES.items():
        assert Arch.load(alias).name == name


@pytest.mark.parametrize("name", ARCHES)
def test_every_arch_file(name):
    arch = Arch.load(name)
    assert arch.name == name
    assert arch.makevars.get("ARCH"), "every arch sets ARCH"
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in arch.makevars.items())
    assert arch.srcarch
    assert arch.cross_compile.endswith("-")
    assert arch.kernel_image
    path = arch.kernel_image_path
    assert path and not posixpath.isabs(path) and ".." not in path.split("/")
    assert bool(arch.xip_image) == bool(arch.xip_image_path), "xip_image needs xip_image_path"
    assert all(isinstance(m, str) and m for m in arch.native)
    assert isinstance(arch.clang, bool)
    assert isinstance(arch.dtbs, bool)
    assert all(tool and DEBIAN_PACKAGE.match(pkg) for tool, pkg in arch.host_tools.items())
    assert arch.gcc or arch.clang, "some toolchain must build it"
    # Fragments are literal options: the config check then proves each one held.
    assert all(parse_literal(f) for f in arch.kconfig_add), arch.kconfig_add
    assert set(arch.cross_debian_packages) <= set(definitions.available("toolchain"))
    # The loader ignores unknown keys, so a typo ("clnag: false") would pass silently.
    d = definitions.load("arch", name)
    assert set(d.fields) <= FIELDS, f"{d.path}: unknown keys {set(d.fields) - FIELDS}"


def test_aliases_load_the_same_arch():
    for alias, name in definitions.aliases("arch").items():
        assert Arch.load(alias) == Arch.load(name)


def test_x86_64():
    arch = Arch.load("x86_64")
    assert arch.makevars == {"ARCH": "x86_64"}
    assert arch.srcarch == "x86"
    assert arch.kernel_image == "bzImage"
    assert arch.kernel_image_path == "arch/x86/boot/bzImage"
    assert arch.dtbs is False
    assert arch.clang is True
    assert Arch.load("amd64") == arch


def test_native_and_cross_compile():
    arch = Arch.load("x86_64")
    assert arch.is_native("x86_64")
    assert arch.cross_compile_for("x86_64") == ""
    assert not arch.is_native("aarch64")
    assert arch.cross_compile_for("aarch64") == "x86_64-linux-gnu-"


def test_is_frozen():
    arch = Arch.load("x86_64")
    with pytest.raises(dataclasses.FrozenInstanceError):
        arch.name = "other"  # type: ignore[misc]


def test_unknown_arch_message_names_value_where_and_known():
    with pytest.raises(UnknownArch) as exc:
        Arch.load("vax", "target arch")
    msg = str(exc.value)
    assert msg.startswith("target arch: unknown arch 'vax'; known: ")
    for name in [*ARCHES, *definitions.aliases("arch")]:
        assert name in msg
    assert exc.value.name == "vax"
    assert exc.value.kind == "arch"


def test_unknown_arch_without_where():
    with pytest.raises(UnknownArch, match=r"^unknown arch 'vax'; known: "):
        Arch.load("vax")


def test_with_kernel_image():
    arm64 = Arch.load("arm64").with_kernel_image("Image.bz2")
    assert (arm64.kernel_image, arm64.kernel_image_path) == (
        "Image.bz2",
        "arch/arm64/boot/Image.bz2",
    )
    x86 = Arch.load("x86_64").with_kernel_image("vmlinux")
    assert (x86.kernel_image, x86.kernel_image_path) == ("vmlinux", "vmlinux")
    assert Arch.load("x86_64").kernel_image == "bzImage", "the loaded arch is not changed"


# -- the arches Debian 12 builds beyond the first twelve (issue 14) ------------------------


@pytest.mark.parametrize(
    ("name", "makevars", "cross", "image", "path"),
    [
        ("um", {"ARCH": "um", "SUBARCH": "x86_64"}, "x86_64-linux-gnu-", "linux", "linux"),
        ("armel", {"ARCH": "arm"}, "arm-linux-gnueabi-", "zImage", "arch/arm/boot/zImage"),
        ("alpha", {"ARCH": "alpha"}, "alpha-linux-gnu-", "boot", "arch/alpha/boot/vmlinux.gz"),
        ("m68k", {"ARCH": "m68k"}, "m68k-linux-gnu-", "vmlinux.gz", "vmlinux.gz"),
        (
            "parisc64",
            {"ARCH": "parisc64"},
            "hppa64-linux-gnu-",
            "bzImage",
            "arch/parisc/boot/bzImage",
        ),
        ("hexagon", {"ARCH": "hexagon"}, "hexagon-linux-musl-", "vmlinux", "vmlinux"),
        ("mips64", {"ARCH": "mips"}, "mips64-linux-gnuabi64-", "vmlinux", "vmlinux"),
        (
            "powerpc64",
            {"ARCH": "powerpc"},
            "powerpc64-linux-gnu-",
            "zImage",
            "arch/powerpc/boot/zImage",
        ),
        (
            "powerpc64le",
            {"ARCH": "powerpc"},
            "powerpc64le-linux-gnu-",
            "zImage",
            "arch/powerpc/boot/zImage",
        ),
    ],
)
def test_new_arch_makevars_and_image(name, makevars, cross, image, path):
    """What each was checked against: a real tinyconfig build of Linux 6.1."""
    arch = Arch.load(name)
    assert dict(arch.makevars) == makevars
    assert arch.cross_compile == cross
    assert (arch.kernel_image, arch.kernel_image_path) == (image, path)


def test_um_is_native_on_x86_64_only():
    um = Arch.load("um")
    assert um.cross_compile_for("x86_64") == ""
    assert um.srcarch == "um" and not um.dtbs and um.clang and um.gcc


def test_hexagon_is_clang_only_and_brings_no_binutils():
    hexagon = Arch.load("hexagon")
    assert hexagon.clang and not hexagon.gcc
    assert hexagon.cross_debian_packages == {"clang": ()}


def test_variants_that_share_an_arch_need_their_fragments():
    assert Arch.load("mips64").kconfig_add == ("CONFIG_64BIT=y", "CONFIG_CPU_MIPS64_R2=y")
    assert Arch.load("powerpc64").kconfig_add == ("CONFIG_PPC64=y",)
    assert Arch.load("powerpc64le").kconfig_add == ("CONFIG_PPC64=y", "CONFIG_CPU_LITTLE_ENDIAN=y")
    # ARCH chooses the word size on these: no fragment.
    assert Arch.load("parisc64").kconfig_add == () and Arch.load("sparc").kconfig_add == ()
    assert Arch.load("powerpc").kconfig_add == ()


def test_bad_cross_debian_packages_names_the_file(data_dir):
    (data_dir / "arch" / "badpkgs.yaml").write_text(
        "makevars: {ARCH: x}\nsrcarch: x\ncross_compile: x-\nkernel_image: I\n"
        "kernel_image_path: I\ndtbs: false\ncross_debian_packages: {gcc: gcc-x}\n"
    )
    with pytest.raises(DefinitionError) as exc:
        Arch.load("badpkgs")
    assert str(exc.value) == (
        f"{data_dir / 'arch' / 'badpkgs.yaml'}: "
        "'cross_debian_packages' must map toolchain families to package lists"
    )


@pytest.mark.parametrize("name", definitions.available("arch"))
def test_every_key_of_an_arch_file_is_read(name):
    """A key no field reads is dead data (debian_packages once sat in all
    21 files, read by nothing)."""
    d = definitions.load("arch", name)
    read = {f.name for f in dataclasses.fields(Arch)} | {"aliases"}
    assert set(d.fields) <= read, sorted(set(d.fields) - read)
