"""BuildSpec (spec.py): made and validated in one place."""

import pytest

from pytest_kbuild import Build, BuildSpec, load_matrix
from pytest_kbuild.errors import KbuildUserError, MatrixError, UnknownRuntime
from pytest_kbuild.runtime import Registry
from pytest_kbuild.spec import build_id
from tests.support import llvm_dir


def test_the_caller_says_which_runtimes_are_known():
    with pytest.raises(UnknownRuntime) as exc:
        BuildSpec.make("x86_64", runtime="nope", runtimes=Registry())
    assert str(exc.value).startswith("runtime: unknown runtime 'nope'; known: docker, local")
    assert BuildSpec.make("x86_64", runtime="null", runtimes=Registry()).runtime == "local"
    # Without the names, spec.py (below runtime/) cannot judge the name:
    assert BuildSpec.make("x86_64", runtime="nope").runtime == "nope"


def test_an_unknown_runtime_is_an_error_of_the_python_api(kernel_tree, tmp_path):
    for given in (
        {"runtime": "nope"},
        {"spec": BuildSpec.make("x86_64", runtime="nope")},
    ):
        with pytest.raises(UnknownRuntime, match="^runtime: unknown runtime 'nope'; known: "):
            Build(kernel_tree, output_dir=tmp_path / "out", **given)


def test_an_unknown_runtime_is_an_error_of_a_matrix(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\nruntime: nope\n")
    with pytest.raises(MatrixError, match=r":3: matrix\.runtime: unknown runtime 'nope'; known: "):
        load_matrix(path, check=False)


def test_one_assembly_for_every_maker(tmp_path):
    from pytest_kbuild import spec

    s = spec.assemble(
        "x86_64", "gcc", "defconfig", ["config", "dtbs"], origin="t", base_dir=tmp_path
    )
    assert (s.id, s.targets, s.skip_reason) == ("x86_64-gcc-defconfig", ("config",), "")
    assert [t for t, _ in s.left_out] == ["dtbs"]
    kept = spec.assemble(
        "x86_64",
        "gcc",
        "defconfig",
        ["config", "dtbs"],
        origin="t",
        base_dir=tmp_path,
        leave_out=False,
        fixed_id="x",
        skip_reason="why",
    )
    assert (kept.id, kept.targets, kept.left_out, kept.skip_reason) == (
        "x",
        ("config", "dtbs"),
        (),
        "why",
    )
    assert BuildSpec.make("x86_64", targets=["config", "dtbs"]).targets == ("config", "dtbs")


# -- a toolchain from a directory ---------------------------------------------------------


def test_a_toolchain_directory_in_both_forms_gives_one_spec(tmp_path):
    llvm = llvm_dir(tmp_path / "bin")
    by_string = BuildSpec.make("arm64", toolchain=f"llvm@{llvm}", kconfig="tinyconfig")
    assert by_string.toolchain == f"llvm-16@{llvm}"
    assert by_string.id == "arm64-llvm-16-tinyconfig"  # the probed major version
    by_mapping = BuildSpec.make(
        "arm64", toolchain={"name": "llvm-16", "path": str(llvm)}, kconfig="tinyconfig"
    )
    assert by_mapping == by_string
    named = BuildSpec.make(
        "arm64", toolchain={"name": "llvm-tip", "path": "bin"}, base_dir=tmp_path
    )
    assert (named.id, named.toolchain) == ("arm64-llvm-tip-defconfig", f"llvm-tip@{llvm}")


@pytest.mark.parametrize(
    ("mapping", "problem"),
    [
        ({"path": "/opt"}, "a toolchain mapping needs name: (a string), got None; for example "),
        ({"name": "llvm", "path": ""}, "a toolchain mapping needs path: (a string), got ''; "),
        ({"name": "llvm", "path": "/x", "v": 1}, "unknown key 'v' in a toolchain mapping; "),
        ({"name": "a@b", "path": "/x"}, "toolchain name 'a@b' must not hold '@'"),
    ],
)
def test_a_bad_toolchain_mapping_says_what_is_accepted(mapping, problem):
    with pytest.raises(KbuildUserError) as exc:
        BuildSpec.make("arm64", toolchain=mapping)
    assert str(exc.value).startswith(problem)


def test_the_build_id_names_a_directory_toolchain_not_its_path():
    assert build_id("arm64", "llvm-21@/opt/llvm-21/bin", "defconfig") == "arm64-llvm-21-defconfig"
    assert build_id("arm64", "gcc-14-korg@/opt/x", "tinyconfig", "kasan") == (
        "arm64-gcc-14-korg-tinyconfig-kasan"
    )
