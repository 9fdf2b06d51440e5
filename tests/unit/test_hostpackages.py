"""The Debian packages a matrix's builds need (`pytest-kbuild packages`)."""

from __future__ import annotations

import platform
import re

import pytest

from pytest_kbuild import matrix
from pytest_kbuild.cli import hostpackages
from pytest_kbuild.cli.commands import main
from pytest_kbuild.spec import BuildSpec
from tests.support import CI_BOOT_ARCHES, ROOT
from tests.unit.test_ci_setup import setup_packages

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="package names are those of an x86_64 host"
)
DEBIAN_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")  # Debian policy 5.6.1


def test_a_build_needs_common_toolchain_arch_wrapper_and_target_packages():
    spec = BuildSpec.make("arc", "gcc-12", "tinyconfig", targets=["headers"], wrapper="ccache")
    wanted = hostpackages.for_build(spec)
    assert set(hostpackages.common()) <= wanted
    assert {"gcc-12", "gcc-12-arc-linux-gnu"} <= wanted  # the toolchain's, cross
    assert "u-boot-tools" in wanted  # the arch's host tool (mkimage)
    assert "ccache" in wanted  # the wrapper's
    assert {"rsync", "flex"} <= wanted  # headers' and config's (a dependency)
    assert "kmod" in wanted and "lz4" not in hostpackages.for_build(
        BuildSpec.make("x86_64", "gcc", "tinyconfig", targets=["config"])
    )


def test_kernel_brings_the_compressors_a_config_may_ask_for():
    wanted = hostpackages.for_build(BuildSpec.make("x86_64", "gcc", "tinyconfig"))
    assert {"bzip2", "lz4", "lzop", "zstd", "xz-utils"} <= wanted


def test_clang_cross_brings_binutils_of_the_triplet():
    wanted = hostpackages.for_build(BuildSpec.make("s390", "clang-16", "tinyconfig"))
    assert {"clang-16", "lld-16", "llvm-16", "binutils-s390x-linux-gnu"} <= wanted


def test_hexagon_needs_llvm_and_no_binutils():
    wanted = hostpackages.for_build(BuildSpec.make("hexagon", "clang-16", "tinyconfig"))
    assert {"clang-16", "lld-16", "llvm-16"} <= wanted
    assert [p for p in wanted if p.startswith("binutils-")] == []


def test_parisc64_needs_both_hppa_compilers():
    wanted = hostpackages.for_build(BuildSpec.make("parisc64", "gcc", "tinyconfig"))
    assert {"gcc-hppa64-linux-gnu", "gcc-hppa-linux-gnu"} <= wanted


def test_a_boot_brings_its_machines_qemu_firmware_and_init_libc():
    def boot_packages(arch):
        spec = BuildSpec.make(arch, "gcc", "tinyconfig", targets=["config", "kernel", "boot"])
        return hostpackages.for_build(spec) - hostpackages.for_build(
            BuildSpec.make(arch, "gcc", "tinyconfig", targets=["config", "kernel"])
        )

    assert boot_packages("x86_64") == {"qemu-system-x86"}
    assert boot_packages("i386") == {"qemu-system-x86"}
    assert boot_packages("arm") == {"qemu-system-arm"}
    assert boot_packages("riscv") == {"qemu-system-misc", "opensbi"}
    assert boot_packages("mips") == {"qemu-system-mips"}
    assert boot_packages("s390") == {"qemu-system-misc", "libc6-dev-s390x-cross"}
    assert boot_packages("powerpc") == {
        "qemu-system-ppc",
        "gcc-powerpc-linux-gnu",
        "libc6-dev-powerpc-cross",
    }
    assert boot_packages("sparc") == set()  # no machine: the boot skips


def test_skipped_builds_need_nothing():
    skipped = BuildSpec.make("sparc", "clang-16", "tinyconfig")
    assert skipped.skip_reason
    assert hostpackages.for_builds([skipped]) == []


@pytest.mark.parametrize("name", ["smoke", "stable", "fakelinux", "containers", "boot"])
def test_every_shipped_matrix_gives_valid_sorted_package_names(name):
    builds = matrix.load(ROOT / "matrices" / f"{name}.yaml", check=False).builds
    packages = hostpackages.for_builds(builds)
    assert packages == sorted(set(packages)) and "make" in packages
    assert [p for p in packages if not DEBIAN_PACKAGE.match(p)] == []


def test_ci_setup_installs_what_the_readme_matrices_need():
    """The README's main job (smoke.yaml) and the fakelinux matrix run on a
    fresh machine that .ci/setup prepared: it installs every package they need."""
    for name in ("smoke", "fakelinux"):
        builds = matrix.load(ROOT / "matrices" / f"{name}.yaml", check=False).builds
        missing = set(hostpackages.for_builds(builds)) - setup_packages()
        assert missing == set(), f"{name}.yaml needs {missing}, which .ci/setup does not install"


def test_ci_setup_installs_what_the_boot_arches_need():
    """CI's boot arches need only PACKAGES; the others (PYTEST_KBUILD_BOOT_ARCHES)
    get BOOT_PACKAGES too, and that list holds nothing the boots do not need."""
    builds = matrix.load(ROOT / "matrices" / "boot.yaml", check=False).builds
    ci = [b for b in builds if b.arch in CI_BOOT_ARCHES]
    assert {b.arch for b in ci} == set(CI_BOOT_ARCHES)
    assert set(hostpackages.for_builds(ci)) - setup_packages() == set()
    wanted = set(hostpackages.for_builds(builds))
    extra = setup_packages("BOOT_PACKAGES")
    assert wanted - setup_packages() - extra == set()
    assert extra - wanted == set()


def test_packages_command_prints_one_line_for_apt_get(capsys):
    assert main(["packages", str(ROOT / "matrices" / "smoke.yaml")]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert {"clang-16", "gcc-riscv64-linux-gnu", "rsync"} <= set(out.split())


def test_packages_command_names_a_bad_matrix(tmp_path, capsys):
    bad = tmp_path / "m.yaml"
    bad.write_text("arch: [vax]\n")
    assert main(["packages", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "vax" in err and "Traceback" not in err


def test_dtbs_check_needs_dtschema_from_pypi_and_its_libraries_from_debian():
    spec = BuildSpec.make("arm64", "gcc", "tinyconfig", targets=["dtbs_check"])
    assert {"python3-libfdt", "python3-jsonschema", "yamllint"} <= hostpackages.for_build(spec)
    assert hostpackages.pypi_for_builds([spec]) == ["dtschema==2022.12"]
    kernel = BuildSpec.make("arm64", "gcc", "tinyconfig", targets=["kernel"])
    assert hostpackages.pypi_for_builds([kernel]) == []
    assert "dtschema==2022.12" in hostpackages.pypi_all()


def test_packages_command_prints_pypi_requirements(tmp_path, capsys):
    m = tmp_path / "m.yaml"
    m.write_text("arch: [arm64]\ntoolchain: [gcc]\nkconfig: [tinyconfig]\ntargets: [dtbs_check]\n")
    assert main(["packages", "--pypi", str(m)]) == 0
    assert capsys.readouterr().out == "dtschema==2022.12\n"
    assert main(["packages", "--pypi", str(ROOT / "matrices" / "smoke.yaml")]) == 0
    assert capsys.readouterr().out == "\n"
    assert main(["packages", "--pypi"]) == 0  # every target's: what .ci/setup installs
    assert capsys.readouterr().out.split() == hostpackages.pypi_all()


def test_packages_command_without_a_matrix_says_what_to_give(capsys):
    with pytest.raises(SystemExit):
        main(["packages"])
    assert "give at least one MATRIX" in capsys.readouterr().err


def test_ci_setup_can_install_what_the_hand_built_arches_need():
    """The arches built by hand (README's Arches section) get their cross gcc
    from ARCH_PACKAGES (PYTEST_KBUILD_MORE_ARCHES=1); it holds nothing else."""
    arches = ("alpha", "armel", "m68k", "mips64", "parisc64", "powerpc64")
    builds = [BuildSpec.make(a, "gcc", "tinyconfig", targets=["kernel"]) for a in arches]
    wanted = set(hostpackages.for_builds(builds)) - setup_packages()
    assert wanted == setup_packages("ARCH_PACKAGES")
