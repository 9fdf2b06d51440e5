"""BuildSpec (spec.py): made and validated in one place."""

import pytest

from pytest_kbuild import Build, BuildSpec, load_matrix
from pytest_kbuild.errors import MatrixError, UnknownRuntime
from pytest_kbuild.runtime import Registry


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
