"""TuxSuite plans (plan.py) read through matrix.load, as --kbuild-matrix does."""

import collections
import re
import shutil
from pathlib import Path

import pytest

import pytest_kbuild
from pytest_kbuild import matrix
from pytest_kbuild.definitions.targets import default_targets
from pytest_kbuild.errors import MatrixError
from pytest_kbuild.spec import BuildSpec

PLANS = Path(__file__).parent / "data" / "plans"
SAFE_ID = re.compile(r"^[A-Za-z0-9_.+-]+$")
X86_TARGETS = ("config", "kernel", "debugkernel", "modules", "headers")
BOOT_MISSING = "boot target not available"


def load(path, **kwargs):
    kwargs.setdefault("check", False)
    return matrix.load(path, **kwargs)


def builds(path, **kwargs):
    return {b.id: b for b in load(path, **kwargs).builds}


def error(path, **kwargs):
    with pytest.raises(MatrixError) as exc:
        load(path, **kwargs)
    return str(exc.value)


PLAN = """
version: 1
jobs:
- name: one
  build: {target_arch: x86_64, toolchain: gcc-12, kconfig: tinyconfig}
"""


# -- the whole format -------------------------------------------------------------------------


def test_a_plan_gives_the_buildspecs_a_matrix_gives(write_matrix):
    b = load(write_matrix(PLAN)).builds
    assert b == (
        BuildSpec(
            id="x86_64-gcc-12-tinyconfig-one",
            arch="x86_64",
            toolchain="gcc-12",
            kconfig="tinyconfig",
            targets=X86_TARGETS,
            left_out=b[0].left_out,
            name="one",
            origin="plan.jobs[0].build",
            line=4,
            job="one",
        ),
    )
    same = load(write_matrix("arch: x86_64\ntoolchain: gcc-12\nkconfig: tinyconfig\n", "m.yaml"))
    assert same.builds[0].targets == b[0].targets
    assert same.builds[0].left_out == b[0].left_out


def test_full_plan_every_build():
    got = builds(PLANS / "full.yaml")
    assert all(SAFE_ID.match(i) for i in got)
    assert sorted(got) == [
        "arm-gcc-12-defconfig-job4",
        "arm-gcc-12-defconfig-job4-2",
        "arm64-clang-16-allmodconfig-toolchains",
        "arm64-clang-android-defconfig-toolchains",
        "arm64-clang-nightly-defconfig-toolchains",
        "arm64-gcc-12-defconfig-fragments",
        "arm64-gcc-12-defconfig-fragments-plain",
        "arm64-korg-gcc-99-defconfig-toolchains",
        "arm64-prebuilt-Image.gz-prebuilt",
        "loongarch-clang-16-defconfig-job4",
        "mips-gcc-12-malta_defconfig-toolchains",
        "riscv-korg-gcc-13-defconfig-toolchains",
        "x86_64-gcc-12-tinyconfig-single",
        "x86_64-korg-clang-17-defconfig-toolchains",
        "x86_64-llvm-17-defconfig-toolchains",
        "x86_64-rustclang-defconfig-toolchains",
    ]


def test_kconfig_list_is_base_then_fragments_of_every_kind():
    b = builds(PLANS / "full.yaml")["arm64-gcc-12-defconfig-fragments"]
    assert b.kconfig == "defconfig"
    assert b.kconfig_add == (
        "CONFIG_KASAN=y",
        "# CONFIG_DEBUG_INFO is not set",
        "kvm_guest.config",
        "extra.config",
        "https://example.org/fragments/debug.config",
    )
    assert b.base_dir == PLANS  # extra.config is found next to the plan
    assert b.targets == ("config", "kernel", "modules", "boot")  # its job's qemu test
    assert b.env == (("KCONFIG_NOSILENTUPDATE", "1"),)


def test_a_second_build_of_one_config_is_told_apart():
    got = builds(PLANS / "full.yaml")
    assert got["arm-gcc-12-defconfig-job4"].kconfig_add == ()
    assert got["arm-gcc-12-defconfig-job4-2"].kconfig_add == ("CONFIG_SMP=n",)
    assert got["arm64-gcc-12-defconfig-fragments-plain"].name == "fragments-plain"


def test_default_target_is_the_default_targets_and_tuxmake_only_targets_skip():
    b = builds(PLANS / "full.yaml")["x86_64-korg-clang-17-defconfig-toolchains"]
    assert b.targets == tuple(t for t in default_targets() if t in X86_TARGETS)
    (name, why), *_ = b.unavailable
    assert name == "dtbs-legacy"
    assert why.startswith("TuxMake target dtbs-legacy is not built by pytest-kbuild")


def test_kernel_image():
    got = builds(PLANS / "full.yaml")
    assert got["mips-gcc-12-malta_defconfig-toolchains"].kernel_image == "vmlinux"
    assert got["riscv-korg-gcc-13-defconfig-toolchains"].kernel_image == "Image"


# -- toolchains and arches that are not here --------------------------------------------------


def test_korg_toolchains_run_on_debians_and_say_so():
    got = builds(PLANS / "full.yaml")
    gcc = got["riscv-korg-gcc-13-defconfig-toolchains"]
    assert (gcc.toolchain, gcc.skip_reason) == ("gcc-13", "")
    assert dict(gcc.notes)["toolchain"] == (
        "kernel.org's gcc 13 is not packaged here; built with Debian's gcc-13"
    )
    clang = got["x86_64-korg-clang-17-defconfig-toolchains"]
    assert clang.toolchain == "clang-17"


def test_llvm_1_with_a_versioned_clang_uses_debians_versioned_tools():
    got = builds(PLANS / "full.yaml")
    b = got["x86_64-korg-clang-17-defconfig-toolchains"]
    assert b.make_variables == (("LLVM_IAS", "1"),)  # our clang-17 sets LLVM=-17
    assert "versioned LLVM-17" in dict(b.notes)["LLVM"]
    assert got["arm64-clang-16-allmodconfig-toolchains"].make_variables == ()


@pytest.mark.parametrize(
    "build_id, reason",
    [
        ("arm64-clang-nightly-defconfig-toolchains", "clang-nightly is a daily LLVM snapshot"),
        ("arm64-clang-android-defconfig-toolchains", "clang-android is Android's prebuilt"),
        ("x86_64-rustclang-defconfig-toolchains", "rustclang needs a rustc release"),
        ("x86_64-llvm-17-defconfig-toolchains", "llvm-17 (clang with every LLVM tool)"),
        ("arm64-korg-gcc-99-defconfig-toolchains", "korg-gcc-99 would build with gcc-99"),
        ("loongarch-clang-16-defconfig-job4", "pytest-kbuild cannot build arch loongarch"),
        ("arm64-prebuilt-Image.gz-prebuilt", "a test of a prebuilt kernel"),
    ],
)
def test_what_cannot_build_here_is_a_skip_with_why(build_id, reason):
    assert builds(PLANS / "full.yaml")[build_id].skip_reason.startswith(reason)


def test_a_toolchain_tuxsuite_does_not_have_either_is_an_error(write_matrix):
    path = write_matrix(PLAN.replace("gcc-12", "icc-3"))
    msg = error(path)
    assert msg.startswith(f"{path}:4: plan.jobs[0].build.toolchain: unknown toolchain 'icc-3'")


@pytest.mark.parametrize("name", ["gcc-7", "clang-22"])
def test_an_unknown_versioned_toolchain_skips(write_matrix, name):
    # where a matrix's clang-22 is an error: a plan's builds are TuxSuite's, not ours
    b = load(write_matrix(PLAN.replace("gcc-12", name))).builds[0]
    assert b.skip_reason.startswith(f"{name} would build with {name}, which pytest-kbuild")


# -- tests become boot items ------------------------------------------------------------------


def test_qemu_tests_are_boot_items():
    got = builds(PLANS / "full.yaml")
    b = got["x86_64-gcc-12-tinyconfig-single"]
    assert b.targets[-1] == "boot" and "boot" not in dict(b.unavailable)
    assert dict(b.notes) == {
        "devices": "qemu-x86_64",
        "tests": "ltp-smoke: not run here (pytest-kbuild boots the kernel)",
    }


def test_a_device_of_another_arch_or_no_qemu_is_said(write_matrix):
    other = PLAN + "  test: {device: qemu-arm64}\n"
    b = load(write_matrix(other)).builds[0]
    assert dict(b.unavailable)["boot"] == "device qemu-arm64 boots arm64, not this x86_64 build"
    board = PLAN + "  test: {device: fvp-aemva}\n"
    b = load(write_matrix(board)).builds[0]
    assert "not a QEMU machine" in dict(b.unavailable)["boot"]


def test_with_a_boot_target_the_test_is_a_boot_item(data_dir, write_matrix):
    """Once data/target/boot.yaml exists, a qemu test adds the boot target."""
    real = Path(pytest_kbuild.__file__).parent / "data"  # data_dir replaced DATA_DIR
    for kind in ("arch", "toolchain", "target", "wrapper"):
        for f in (real / kind).glob("*.yaml"):
            shutil.copy(f, data_dir / kind)
    (data_dir / "target" / "boot.yaml").write_text("order: 9\ndepends: [kernel]\n")
    b = load(write_matrix(PLAN + "  test: {device: qemu-x86_64}\n")).builds[0]
    assert b.targets == (*X86_TARGETS, "boot")
    assert b.unavailable == ()
    other = load(write_matrix(PLAN + "  test: {device: qemu-arm64}\n")).builds[0]
    assert "boot" not in other.targets  # a device of another arch: a SKIP still


# -- job selection ----------------------------------------------------------------------------


def test_job_globs_select_jobs():
    got = builds(PLANS / "full.yaml", jobs=["tool*", "single"])
    assert {b.job for b in got.values()} == {"toolchains", "single"}
    assert {b.job for b in builds(PLANS / "full.yaml", jobs=["job4"]).values()} == {"job4"}


def test_a_glob_that_matches_no_job_names_the_jobs():
    msg = error(PLANS / "full.yaml", jobs=["nope*"])
    assert "plan.jobs: --kbuild-plan-job 'nope*' matches no job; jobs: single, fragments," in msg


def test_a_plain_matrix_ignores_job_globs(write_matrix):
    path = write_matrix("arch: x86_64\ntoolchain: gcc\n")
    assert len(load(path, jobs=["x"]).builds) == 1


# -- the documentation's shapes and a large plan ----------------------------------------------


def test_docs_examples():
    got = load(PLANS / "docs-examples.yaml").builds
    by_job = collections.Counter(b.job for b in got)
    assert by_job == {"all-toolchains": 6, "armv5": 2, "ppc64": 1, "sparc64": 1, "test-only": 2}
    skipped = {b.id for b in got if b.skip_reason}
    assert skipped == {
        "x86_64-clang-nightly-tinyconfig-all-toolchains",
        "x86_64-prebuilt-bzImage-test-only",
        "riscv-prebuilt-Image-test-only",
    }


def test_large_plan():
    got = load(PLANS / "large.yaml").builds
    assert len(got) == 105
    assert len({b.job for b in got}) == 11
    assert sum(1 for b in got if b.kconfig.startswith("https://")) == 22
    assert sum(1 for b in got if b.kconfig == "allmodconfig") == 14
    reasons = collections.Counter(b.skip_reason.split(";")[0].split(" (")[0] for b in got)
    assert reasons == {
        "": 98,
        # hexagon and um have arch data now: their nightly builds skip for clang-nightly
        "clang-nightly is a daily LLVM snapshot, not a Debian package": 5,
        "pytest-kbuild cannot build arch loongarch": 1,
        "rustclang needs a rustc release and the kernel's Rust support, which pytest-kbuild "
        "does not set up": 1,
    }


# -- errors name the file, line and key -------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("version: 2\njobs: []\n", "1: plan.version: unsupported version 2; a TuxSuite plan"),
        ("jobs: [{build: {}}]\n", "1: plan.version: unsupported version None"),
        ("version: 1\njobs: []\n", "2: plan.jobs: must be a non-empty list of jobs"),
        ("version: 1\njobs: [3]\n", "2: plan.jobs[0]: must be a mapping with build:"),
        ("version: 1\njobs:\n- {name: a}\n", "3: plan.jobs[0]: has no build:, builds: nor tests:"),
        ("version: 1\nowner: me\njobs: [x]\n", "2: plan.owner: unknown key 'owner'; accepted:"),
        (
            "version: 1\njobs:\n- {name: a, bulid: {}}\n",
            "3: plan.jobs[0].bulid: unknown key 'bulid'; accepted: name, build, builds,",
        ),
        (
            "version: 1\njobs:\n- builds: {target_arch: arm}\n",
            "3: plan.jobs[0].builds: must be a list of builds, got a mapping",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm}\n",
            "3: plan.jobs[0].build: missing toolchain:",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc, git_ref: v6.1}\n",
            "3: plan.jobs[0].build.git_ref: unknown key 'git_ref'; accepted: target_arch,",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: vax, toolchain: gcc}\n",
            "3: plan.jobs[0].build.target_arch: unknown arch 'vax'",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc, kconfig: []}\n",
            "3: plan.jobs[0].build.kconfig: must not be empty",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc, "
            "kconfig: [defconfig, CONFIG_X=maybe]}\n",
            "3: plan.jobs[0].build.kconfig[1]: kconfig 'CONFIG_X=maybe': not a valid option",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc, targets: [zImage]}\n",
            "3: plan.jobs[0].build.targets[0]: unknown target 'zImage'",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc, "
            "make_variables: {ARCH: arm}}\n",
            "3: plan.jobs[0].build.make_variables.ARCH: make variable ARCH cannot be set",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc, kernel_image: a/b}\n",
            "3: plan.jobs[0].build.kernel_image: 'a/b' is not an image file name",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc, build_name: a b}\n",
            "3: plan.jobs[0].build.build_name: name 'a b' must use only",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc}\n  test: qemu-arm\n",
            "4: plan.jobs[0].test: a test is a mapping with device:",
        ),
        (
            "version: 1\njobs:\n- build: {target_arch: arm, toolchain: gcc}\n  name: [a]\n",
            "4: plan.jobs[0].name: name ['a'] must be a string",
        ),
    ],
)
def test_errors_name_file_line_and_key(write_matrix, text, message):
    path = write_matrix(text)
    assert error(path).startswith(f"{path}:{message}"), error(path)
