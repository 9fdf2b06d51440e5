import dataclasses
import re
import shutil
from pathlib import Path

import pytest
from fakes import make_tree

import pytest_kbuild
from pytest_kbuild import definitions, matrix
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.definitions.targets import default_targets
from pytest_kbuild.errors import MatrixError, NotAKernelTree
from pytest_kbuild.matrix.matrixfile import TOP_KEYS, BuildSpec, kconfig_id
from tests.support import llvm_dir

SAFE_ID = re.compile(r"^[A-Za-z0-9_.+-]+$")
KNOWN_RUNTIMES = ("local", "null")

KNOWN_ARCHES = ", ".join(sorted(definitions.available("arch") + list(definitions.aliases("arch"))))


def load(path, **kwargs):
    kwargs.setdefault("check", False)
    return matrix.load(path, **kwargs)


def error(path, **kwargs):
    """The MatrixError (or other user error) loading *path* raises."""
    with pytest.raises((MatrixError, NotAKernelTree)) as exc:
        load(path, **kwargs)
    return exc.value


# -- expansion --------------------------------------------------------------------------------


def test_expands_the_product_in_id_order(write_matrix):
    path = write_matrix(
        """
        arch: [x86_64]
        toolchain: [gcc-12, clang-16]
        kconfig: [tinyconfig, defconfig]
        """
    )
    m = load(path)
    assert m.path == path
    assert [b.id for b in m.builds] == [
        "x86_64-clang-16-defconfig",
        "x86_64-clang-16-tinyconfig",
        "x86_64-gcc-12-defconfig",
        "x86_64-gcc-12-tinyconfig",
    ]
    b = m.builds[0]
    assert b == BuildSpec(
        id="x86_64-clang-16-defconfig",
        arch="x86_64",
        toolchain="clang-16",
        kconfig="defconfig",
        # dtbs and xipkernel can never apply to x86_64: left out, with why
        targets=("config", "kernel", "debugkernel", "modules", "headers"),
        left_out=(
            ("dtbs", "dtbs does not apply to arch x86_64 (arch data: no dtbs)"),
            ("xipkernel", "xipkernel does not apply to arch x86_64 (arch data: no xip_image)"),
        ),
        origin="matrix (arch x86_64, toolchain clang-16, kconfig defconfig)",
        line=1,
    )
    assert set(b.targets) | {n for n, _ in b.left_out} == set(default_targets())
    assert b.wrapper == "none"
    assert b.runtime == "local"
    assert b.skip_reason == ""
    assert b.base_dir == path.parent


def test_is_deterministic_and_frozen(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc, clang]\n")
    assert load(path) == load(path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        load(path).builds[0].arch = "arm64"


def test_scalar_axes_are_one_element_lists(write_matrix):
    path = write_matrix("arch: x86_64\ntoolchain: gcc\nkconfig: tinyconfig\ntargets: kernel\n")
    (b,) = load(path).builds
    assert (b.id, b.targets) == ("x86_64-gcc-tinyconfig", ("kernel",))


def test_kconfig_defaults_to_defconfig(write_matrix):
    (b,) = load(write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n")).builds
    assert b.kconfig == "defconfig"
    assert b.id == "x86_64-gcc-defconfig"


def test_aliases_become_canonical_names(write_matrix):
    (b,) = load(write_matrix("arch: [amd64]\ntoolchain: [gcc]\n")).builds
    assert b.arch == "x86_64"
    assert b.id.startswith("x86_64-")


def test_ids_are_sorted_and_path_safe(write_matrix):
    path = write_matrix(
        """
        arch: [x86_64]
        toolchain: [gcc]
        kconfig:
          - https://example.com/kernel/configs/my%20big.config
          - configs/arm 64 big.config
          - /abs/path/x86_64_defconfig
          - http://example.com/
          - defconfig
        """
    )
    ids = [b.id for b in load(path).builds]
    assert ids == sorted(ids)
    assert all(SAFE_ID.match(i) for i in ids), ids
    assert set(ids) == {
        "x86_64-gcc-my_20big.config",
        "x86_64-gcc-arm_64_big.config",
        "x86_64-gcc-x86_64_defconfig",
        "x86_64-gcc-example.com",
        "x86_64-gcc-defconfig",
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("defconfig", "defconfig"),
        ("arch/arm64/configs/defconfig", "defconfig"),
        ("https://host/a/b/kernel.config", "kernel.config"),
        ("dir/", "dir"),
        ("a b+c", "a_b+c"),
        ("///", "config"),
        ("%%%", "config"),
    ],
)
def test_kconfig_id(value, expected):
    assert kconfig_id(value) == expected


def test_settings_apply_to_every_build(write_matrix):
    path = write_matrix(
        """
        arch: [x86_64]
        toolchain: [gcc, clang]
        kconfig_add: [CONFIG_DEBUG_INFO=y, "# CONFIG_MODULES is not set", make:kvm_guest.config]
        targets: [kernel, config, kernel]
        make_variables: {W: 1, KCFLAGS: -Werror, V: true}
        env: {KBUILD_BUILD_USER: ci}
        wrapper: ccache
        runtime: null
        """
    )
    for b in load(path).builds:
        assert b.kconfig_add == (
            "CONFIG_DEBUG_INFO=y",
            "# CONFIG_MODULES is not set",
            "make:kvm_guest.config",
        )
        assert b.targets == ("config", "kernel")
        assert b.make_variables == (("KCFLAGS", "-Werror"), ("V", "true"), ("W", "1"))
        assert b.env == (("KBUILD_BUILD_USER", "ci"),)
        assert b.wrapper == "ccache"
        assert b.runtime == "local"


def test_runtimes_given_by_the_caller(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\nruntime: podman\n")
    (b,) = load(path, runtimes=("local", "podman")).builds
    assert b.runtime == "podman"


def test_scalar_kconfig_add(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\nkconfig_add: CONFIG_X=y\n")
    assert load(path).builds[0].kconfig_add == ("CONFIG_X=y",)


def test_empty_variables(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\nmake_variables:\nenv:\n")
    (b,) = load(path).builds
    assert (b.make_variables, b.env) == ((), ())


# -- exclude and include ---------------------------------------------------------------------


def test_exclude_becomes_a_skip_reason(write_matrix):
    path = write_matrix(
        """
        arch: [x86_64]
        toolchain: [gcc, clang]
        kconfig: [defconfig, tinyconfig]
        exclude:
          - {toolchain: clang, kconfig: tinyconfig, reason: " clang tiny is slow "}
          - {arch: amd64, toolchain: clang, reason: second}
        """
    )
    reasons = {b.id: b.skip_reason for b in load(path).builds}
    assert reasons == {
        "x86_64-clang-defconfig": "excluded by matrix.exclude[1]: second",
        "x86_64-clang-tinyconfig": "excluded by matrix.exclude[0]: clang tiny is slow",
        "x86_64-gcc-defconfig": "",
        "x86_64-gcc-tinyconfig": "",
    }


def test_include_adds_a_build_with_its_settings(write_matrix):
    path = write_matrix(
        """
        arch: [x86_64]
        toolchain: [gcc]
        kconfig_add: [CONFIG_A=y]
        make_variables: {W: "1"}
        include:
          - arch: x86_64
            toolchain: clang-16
            kconfig: tinyconfig
            name: lto.v2+x
            kconfig_add: [CONFIG_LTO_CLANG_THIN=y]
            make_variables: {KCFLAGS: -O3}
            targets: [kernel]
            wrapper: sccache
        """
    )
    builds = {b.id: b for b in load(path).builds}
    b = builds["x86_64-clang-16-tinyconfig-lto.v2+x"]
    assert b.name == "lto.v2+x"
    assert b.origin == "matrix.include[0]"
    assert b.line == 6
    assert b.kconfig_add == ("CONFIG_A=y", "CONFIG_LTO_CLANG_THIN=y")
    assert b.make_variables == (("KCFLAGS", "-O3"), ("W", "1"))
    assert b.targets == ("kernel",)
    assert b.wrapper == "sccache"
    x86 = builds["x86_64-gcc-defconfig"]
    assert x86.targets + tuple(n for n, _ in x86.left_out) == (
        "config",
        "kernel",
        "debugkernel",
        "modules",
        "headers",
        "dtbs",
        "xipkernel",
    )


def test_include_kconfig_defaults_to_defconfig(write_matrix):
    path = write_matrix(
        "arch: [x86_64]\ntoolchain: [gcc]\ninclude: [{arch: x86_64, toolchain: clang}]\n"
    )
    assert [b.id for b in load(path).builds] == ["x86_64-clang-defconfig", "x86_64-gcc-defconfig"]


# -- errors: every message names file:line, key path, bad value and what is accepted --------


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    assert str(error(path)) == f"{path}: cannot read matrix: No such file or directory"


def test_bad_yaml_names_the_line(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc\nkconfig: [defconfig]\n")
    err = error(path)
    assert str(err).startswith(f"{path}:3: invalid YAML: ")
    assert err.line == 3


def test_duplicate_key_names_its_line(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\narch: [x86_64]\n")
    assert str(error(path)) == f"{path}:3: invalid YAML: duplicate key 'arch'"


@pytest.mark.parametrize("text", ["- arch\n- toolchain\n", "", "just text\n"])
def test_top_level_must_be_a_mapping(write_matrix, text):
    path = write_matrix(text)
    assert str(error(path)) == (
        f"{path}: matrix: a matrix is a YAML mapping with keys {', '.join(TOP_KEYS)}"
    )


def test_unknown_top_level_key(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\narches: [arm64]\n")
    err = error(path)
    assert str(err) == (
        f"{path}:3: matrix.arches: unknown key 'arches'; accepted: {', '.join(TOP_KEYS)}"
    )
    assert (err.key, err.line) == ("matrix.arches", 3)


@pytest.mark.parametrize("version", ["2", "'1'", "0"])
def test_unsupported_version(write_matrix, version):
    path = write_matrix(f"arch: [x86_64]\ntoolchain: [gcc]\nversion: {version}\n")
    value = {"2": "2", "'1'": "'1'", "0": "0"}[version]
    assert str(error(path)) == (
        f"{path}:3: matrix.version: unsupported version {value}; accepted: 1"
    )


def test_version_1(write_matrix):
    assert load(write_matrix("version: 1\narch: [x86_64]\ntoolchain: [gcc]\n")).builds


def test_unknown_arch_names_index_and_line(write_matrix):
    path = write_matrix("toolchain: [gcc]\narch:\n  - x86_64\n  - vax\n")
    err = error(path)
    assert str(err).startswith(f"{path}:4: matrix.arch[1]: unknown arch 'vax'; known: ")
    assert "x86_64" in str(err)
    assert (err.key, err.line) == ("matrix.arch[1]", 4)


def test_unknown_toolchain_names_index_and_line(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc, clang, gcc-99]\n")
    msg = str(error(path))
    assert msg.startswith(f"{path}:2: matrix.toolchain[2]: unknown toolchain 'gcc-99'; known: ")
    assert "gcc-12" in msg


def test_unknown_target(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\ntargets:\n  - kernel\n  - bzImage\n")
    assert str(error(path)) == (
        f"{path}:5: matrix.targets[1]: unknown target 'bzImage'; "
        f"known: {', '.join(sorted([*definitions.available('target'), 'make:<goal>']))}"
    )


def test_empty_targets(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\ntargets: []\n")
    assert str(error(path)) == f"{path}:3: matrix.targets: must not be empty"


def test_unknown_wrapper(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\nwrapper: distcc\n")
    assert str(error(path)) == (
        f"{path}:3: matrix.wrapper: unknown wrapper 'distcc'; "
        f"known: {', '.join(sorted(definitions.available('wrapper')))}"
    )


def test_unknown_runtime(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\nruntime: podman\n")
    assert str(error(path, runtimes=KNOWN_RUNTIMES)) == (
        f"{path}:3: matrix.runtime: unknown runtime 'podman'; known: local, null"
    )


@pytest.mark.parametrize("axis", ["arch", "toolchain"])
@pytest.mark.parametrize("value", ["", " []", " ~"])
def test_missing_axis(write_matrix, axis, value):
    other = "toolchain: [gcc]" if axis == "arch" else "arch: [x86_64]"
    path = write_matrix(f"{other}\n{axis}:{value}\n")
    assert str(error(path)) == (
        f"{path}:2: matrix.{axis}: missing or empty; give a list of {axis} names"
    )


def test_absent_axis(write_matrix):
    path = write_matrix("toolchain: [gcc]\n")
    assert "matrix.arch: missing or empty; give a list of arch names" in str(error(path))


@pytest.mark.parametrize(
    ("value", "shown"), [("{a: b}", "{'a': 'b'}"), ("true", "True"), ("[x]", "['x']")]
)
def test_axis_values_must_be_strings(write_matrix, value, shown):
    path = write_matrix(f"toolchain: [gcc]\narch:\n  - x86_64\n  - {value}\n")
    assert str(error(path)) == f"{path}:4: matrix.arch[1]: must be a string, got {shown}"


@pytest.mark.parametrize(("value", "shown"), [("true", "True"), ("[x]", "['x']")])
def test_toolchain_values_must_be_strings_or_mappings(write_matrix, value, shown):
    path = write_matrix(f"arch: [x86_64]\ntoolchain:\n  - gcc\n  - {value}\n")
    assert str(error(path)) == f"{path}:4: matrix.toolchain[1]: must be a string, got {shown}"


def test_axis_must_be_a_list(write_matrix):
    path = write_matrix("arch: {x86_64: yes}\ntoolchain: [gcc]\n")
    assert str(error(path)).startswith(f"{path}:1: matrix.arch: must be a list, got ")


def test_axis_must_be_a_list_names_the_yaml_type(write_matrix):
    path = write_matrix("arch: {x86_64: yes}\ntoolchain: [gcc]\n")
    assert "LineDict" not in str(error(path))


def test_option_as_kconfig(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\nkconfig: [CONFIG_X=y]\n")
    assert str(error(path)) == (
        f"{path}:3: matrix.kconfig[0]: kconfig 'CONFIG_X=y': "
        "an option belongs in kconfig_add, not kconfig"
    )


@pytest.mark.parametrize("bad", ["CONFIG_X=maybe", "CONFIG_X", "'# CONFIG_X'", 'CONFIG_S="open'])
def test_kconfig_add_literal_syntax(write_matrix, bad):
    path = write_matrix(
        f"arch: [x86_64]\ntoolchain: [gcc]\nkconfig_add:\n  - CONFIG_OK=y\n  - {bad}\n"
    )
    value = bad.strip("'")
    assert str(error(path)) == (
        f"{path}:5: matrix.kconfig_add[1]: kconfig {value!r}: not a valid option; "
        'accepted: CONFIG_X=y|m|n|"string"|123|0x1f or "# CONFIG_X is not set"'
    )


def test_kconfig_add_unquoted_comment_is_not_a_string(write_matrix):
    path = write_matrix(
        "arch: [x86_64]\ntoolchain: [gcc]\nkconfig_add:\n  - # CONFIG_X is not set\n"
    )
    assert str(error(path)) == f"{path}:4: matrix.kconfig_add[0]: must be a string, got None"


def test_kconfig_add_make_without_target(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\nkconfig_add: ['make:']\n")
    assert str(error(path)) == (
        f"{path}:3: matrix.kconfig_add[0]: kconfig 'make:': "
        "make: needs a target, e.g. make:kvm_guest.config"
    )


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("O", "the build directory is set by pytest-kbuild"),
        ("ARCH", "use the arch axis"),
    ],
)
def test_reserved_make_variables(write_matrix, name, reason):
    path = write_matrix(f"arch: [x86_64]\ntoolchain: [gcc]\nmake_variables:\n  {name}: x\n")
    assert str(error(path)) == (
        f"{path}:4: matrix.make_variables.{name}: make variable {name} cannot be set: {reason}"
    )


def test_reserved_make_variables_in_include(write_matrix):
    path = write_matrix(
        """
        arch: [x86_64]
        toolchain: [gcc]
        include:
          - arch: x86_64
            toolchain: clang
            make_variables: {ARCH: arm64}
        """
    )
    assert str(error(path)) == (
        f"{path}:6: matrix.include[0].make_variables.ARCH: make variable ARCH cannot be set: use the arch axis"
    )


@pytest.mark.parametrize("key", ["make_variables", "env"])
@pytest.mark.parametrize("name", ["1X", "A-B", "A B", "Ä"])
def test_bad_variable_names(write_matrix, key, name):
    path = write_matrix(f"arch: [x86_64]\ntoolchain: [gcc]\n{key}:\n  '{name}': x\n")
    assert str(error(path)) == (
        f"{path}:4: matrix.{key}.{name}: {name!r} is not a variable name (letters, digits, _)"
    )


@pytest.mark.parametrize(
    ("value", "shown"), [("[1]", "[1]"), ("{a: 1}", "{'a': 1}"), ("~", "None")]
)
def test_bad_variable_values(write_matrix, value, shown):
    path = write_matrix(f"arch: [x86_64]\ntoolchain: [gcc]\nenv:\n  X: {value}\n")
    assert str(error(path)) == (
        f"{path}:4: matrix.env.X: value must be a string or number, got {shown}"
    )


@pytest.mark.parametrize("key", ["make_variables", "env"])
def test_variables_must_be_a_mapping(write_matrix, key):
    path = write_matrix(f"arch: [x86_64]\ntoolchain: [gcc]\n{key}: [W=1]\n")
    assert str(error(path)) == f"{path}:3: matrix.{key}: must be a mapping of NAME: value"


EXCLUDE_BASE = "arch: [x86_64]\ntoolchain: [gcc, clang]\nexclude:\n"


@pytest.mark.parametrize("entry", ["  - {toolchain: clang}", "  - {toolchain: clang, reason: ' '}"])
def test_exclude_needs_a_reason(write_matrix, entry):
    path = write_matrix(EXCLUDE_BASE + entry + "\n")
    assert str(error(path)) == (
        f"{path}:4: matrix.exclude[0]: needs a reason: (why this combination is not built)"
    )


def test_exclude_matching_nothing(write_matrix):
    path = write_matrix(
        EXCLUDE_BASE + "  - {toolchain: clang, reason: a}\n  - {toolchain: gcc-12, reason: b}\n"
    )
    assert str(error(path)) == (
        f"{path}:5: matrix.exclude[1]: matches no build of the matrix; remove it or fix its values"
    )


def test_exclude_unknown_key(write_matrix):
    path = write_matrix(
        EXCLUDE_BASE + "  - toolchain: clang\n    targets: [kernel]\n    reason: x\n"
    )
    assert str(error(path)) == (
        f"{path}:5: matrix.exclude[0].targets: unknown key 'targets'; "
        "accepted: arch, toolchain, kconfig, reason"
    )


def test_exclude_without_any_axis(write_matrix):
    path = write_matrix(EXCLUDE_BASE + "  - {reason: everything}\n")
    assert str(error(path)) == (
        f"{path}:4: matrix.exclude[0]: matches on none of arch, toolchain, kconfig"
    )


def test_exclude_not_a_mapping(write_matrix):
    path = write_matrix(EXCLUDE_BASE + "  - clang\n")
    assert str(error(path)) == (
        f"{path}:4: matrix.exclude[0]: must be a mapping like {{arch: arm64, reason: ...}}"
    )


def test_exclude_unknown_value(write_matrix):
    path = write_matrix(EXCLUDE_BASE + "  - toolchain: clang\n    arch: vax\n    reason: x\n")
    assert str(error(path)).startswith(
        f"{path}:5: matrix.exclude[0].arch: unknown arch 'vax'; known: "
    )


INCLUDE_BASE = "arch: [x86_64]\ntoolchain: [gcc]\ninclude:\n"


@pytest.mark.parametrize("axis", ["arch", "toolchain"])
def test_include_missing_axis(write_matrix, axis):
    entry = "{toolchain: clang}" if axis == "arch" else "{arch: x86_64}"
    path = write_matrix(INCLUDE_BASE + f"  - {entry}\n")
    assert str(error(path)) == f"{path}:4: matrix.include[0]: missing {axis}:"


@pytest.mark.parametrize(("name", "shown"), [("a b", "'a b'"), ("x/y", "'x/y'"), ("5", "5")])
def test_include_unsafe_name(write_matrix, name, shown):
    path = write_matrix(
        INCLUDE_BASE + f"  - arch: x86_64\n    toolchain: clang\n    name: {name}\n"
    )
    assert str(error(path)) == (
        f"{path}:6: matrix.include[0].name: name {shown} must use only letters, digits and . _ + -"
    )


def test_include_not_a_mapping(write_matrix):
    path = write_matrix(INCLUDE_BASE + "  - x86_64-clang\n")
    assert str(error(path)) == (
        f"{path}:4: matrix.include[0]: must be a mapping like "
        "{arch: arm, toolchain: gcc, kconfig: ...}"
    )


def test_include_unknown_key(write_matrix):
    path = write_matrix(INCLUDE_BASE + "  - {arch: x86_64, toolchain: clang, reason: x}\n")
    msg = str(error(path))
    assert msg.startswith(f"{path}:4: matrix.include[0].reason: unknown key 'reason'; accepted: ")
    assert "name" in msg


def test_include_bad_value_names_its_key(write_matrix):
    path = write_matrix(INCLUDE_BASE + "  - {arch: x86_64, toolchain: gcc-1}\n")
    assert str(error(path)).startswith(
        f"{path}:4: matrix.include[0].toolchain: unknown toolchain 'gcc-1'"
    )


def test_include_must_be_a_list(write_matrix):
    path = write_matrix(INCLUDE_BASE.replace("include:\n", "include: x86_64-clang\n"))
    assert str(error(path)) == f"{path}:3: matrix.include: must be a list, got a string"


def test_duplicate_id_names_both_entries(write_matrix):
    path = write_matrix(INCLUDE_BASE + "  - {arch: x86_64, toolchain: gcc}\n")
    err = error(path)
    assert str(err) == (
        f"{path}:4: matrix.include[0]: duplicate build id 'x86_64-gcc-defconfig': "
        "matrix (arch x86_64, toolchain gcc, kconfig defconfig) (line 1) and "
        "matrix.include[0] (line 4); add name: to an include entry to tell them apart"
    )


def test_duplicate_id_from_aliases(write_matrix):
    path = write_matrix("arch: [x86_64, amd64]\ntoolchain: [gcc]\n")
    assert "duplicate build id 'x86_64-gcc-defconfig'" in str(error(path))


def test_duplicate_id_from_kconfig_basenames_names_both_values(write_matrix):
    path = write_matrix(
        "arch: [x86_64]\ntoolchain: [gcc]\nkconfig:\n  - defconfig\n  - a/defconfig\n"
    )
    msg = str(error(path))
    assert "duplicate build id 'x86_64-gcc-defconfig'" in msg
    assert "kconfig defconfig)" in msg and "kconfig a/defconfig)" in msg


def test_duplicate_id_from_kconfig_points_at_the_kconfig_item(write_matrix):
    path = write_matrix(
        "arch: [x86_64]\ntoolchain: [gcc]\nkconfig:\n  - defconfig\n  - a/defconfig\n"
    )
    assert str(error(path)).startswith(f"{path}:5: matrix.kconfig[1]: ")


# -- toolchain/arch skips ---------------------------------------------------------------------


def test_clang_on_an_arch_without_clang_is_a_skip(write_matrix):
    noclang = [a for a in definitions.available("arch") if not Arch.load(a).clang]
    if not noclang:
        pytest.skip("no data/arch file has clang: false (see the test below for a fake one)")
    path = write_matrix(f"arch: [{noclang[0]}]\ntoolchain: [gcc, clang]\n")
    reasons = {b.toolchain: b.skip_reason for b in load(path).builds}
    assert reasons == {
        "gcc": "",
        "clang": f"clang cannot build arch {noclang[0]} (arch data: clang: false)",
    }


def test_gcc_on_a_clang_only_arch_is_a_skip(write_matrix):
    path = write_matrix("arch: [hexagon]\ntoolchain: [gcc, clang-16]\n")
    reasons = {b.toolchain: b.skip_reason for b in load(path).builds}
    assert reasons == {
        "gcc": "gcc cannot build arch hexagon (arch data: gcc: false)",
        "clang-16": "",
    }


def test_clang_on_a_fake_arch_without_clang_is_a_skip(data_dir, write_matrix):
    real = Path(pytest_kbuild.__file__).parent / "data"  # data_dir replaced DATA_DIR
    for kind in ("toolchain", "target", "wrapper"):
        for f in (real / kind).glob("*.yaml"):
            shutil.copy(f, data_dir / kind)
    x86 = (real / "arch" / "x86_64.yaml").read_text().replace("clang: true", "clang: false")
    (data_dir / "arch" / "noclangfake.yaml").write_text(x86.replace("aliases:", "old_aliases:"))
    path = write_matrix(
        "arch: [noclangfake]\ntoolchain: [gcc, clang-16]\n"
        "exclude: [{toolchain: gcc, reason: only clang here}]\n"
    )
    reasons = {b.toolchain: b.skip_reason for b in load(path).builds}
    assert reasons == {
        "gcc": "excluded by matrix.exclude[0]: only clang here",
        "clang-16": "clang-16 cannot build arch noclangfake (arch data: clang: false)",
    }


# -- the kernel tree ---------------------------------------------------------------------------


def test_tree_key_is_relative_to_the_matrix(tmp_path, write_matrix):
    tree = make_tree(tmp_path / "src" / "linux")
    path = write_matrix("tree: ../src/linux\narch: [x86_64]\ntoolchain: [gcc]\n", "m/matrix.yaml")
    assert matrix.load(path).tree == tree.resolve()


def test_tree_key_not_a_tree(tmp_path, write_matrix):
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "Makefile").write_text("")
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\ntree: half\n")
    with pytest.raises(NotAKernelTree) as exc:
        matrix.load(path)
    assert str(exc.value) == (
        f"{path}:3: matrix.tree: {str(tmp_path / 'half')!r} is not a kernel tree: "
        "missing Kconfig, Kbuild (a tree has Makefile, Kconfig and Kbuild at its top)"
    )
    assert exc.value.path == str(tmp_path / "half")


def test_tree_key_must_be_a_string(write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\ntree: [linux]\n")
    assert str(error(path)) == f"{path}:3: matrix.tree: must be a path (string)"


def test_kbuild_tree_overrides_the_tree_key(tmp_path, write_matrix, kernel_tree):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\ntree: does/not/exist\n")
    assert matrix.load(path, tree=kernel_tree).tree == kernel_tree


def test_kbuild_tree_not_a_tree(tmp_path, write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n")
    with pytest.raises(NotAKernelTree) as exc:
        matrix.load(path, tree=tmp_path / "empty")
    assert str(exc.value) == (
        f"--kbuild-tree: {str(tmp_path / 'empty')!r} is not a kernel tree: "
        "missing Makefile, Kconfig, Kbuild (a tree has Makefile, Kconfig and Kbuild at its top)"
    )


def test_current_directory_is_the_default_tree(tmp_path, write_matrix, monkeypatch, kernel_tree):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n")
    monkeypatch.chdir(kernel_tree)
    assert matrix.load(path).tree == kernel_tree
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NotAKernelTree) as exc:
        matrix.load(path)
    assert str(exc.value).startswith(
        f"current directory (no tree: key nor --kbuild-tree): {str(tmp_path)!r} is not a kernel tree"
    )


def test_check_false_skips_the_tree_check(tmp_path, write_matrix):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\ntree: nowhere\n")
    assert matrix.load(path, check=False).tree == tmp_path / "nowhere"


def test_check_tree(kernel_tree, tmp_path):
    assert matrix.check_tree(kernel_tree) == kernel_tree
    (kernel_tree / "Kbuild").unlink()
    (kernel_tree / "Kbuild").mkdir()
    with pytest.raises(NotAKernelTree, match=r"^where: .* missing Kbuild "):
        matrix.check_tree(kernel_tree, "where")


# -- hostile input: clear errors of bounded length, never a traceback -----------------


def test_a_binary_file_is_not_a_matrix(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    assert str(error(path)).startswith(f"{path}: not UTF-8 text (byte ")


def test_deeply_nested_lists(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("arch: " + "[" * 10000 + "]" * 10000 + "\n")
    assert str(error(path)) == f"{path}: invalid YAML: nested too deeply"


def test_billion_laughs_is_refused_quickly_and_briefly(tmp_path):
    # Anchors inside arch: each level refers to the one below nine times.
    lines = ["arch:", '  - &a0 ["lol"]']
    for i in range(1, 10):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"  - &a{i} [{refs}]")
    path = tmp_path / "m.yaml"
    path.write_text("\n".join(lines) + "\ntoolchain: [gcc]\n")
    msg = str(error(path))
    assert "must be a string" in msg or "aliases" in msg
    assert len(msg) < 300


def test_too_many_aliases(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("x: &x 1\narch: [" + ", ".join(["*x"] * 1500) + "]\n")
    assert "more than 1000 aliases" in str(error(path))


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('env: {A: "x\\0y"}\n', "matrix.env.A: value 'x\\x00y' holds a NUL byte"),
        ('make_variables: {W: "a\\0b"}\n', "holds a NUL byte"),
        ('make_variables: {"O\\n": x}\n', "make_variables.'O\\n': 'O\\n' is not a variable"),
        ("kconfig_add: ['make:ARCH=arm64']\n", "make: takes one target, not a variable"),
        ("version: true\n", "unsupported version True; accepted: 1"),
        ('tree: "a\\0b"\n', "matrix.tree: 'a\\x00b' holds a NUL byte, which no path can"),
    ],
)
def test_values_that_no_command_can_take(write_matrix, body, problem):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n" + body)
    msg = str(error(path))
    assert msg.startswith(f"{path}:3: ") and problem in msg  # the line of the value


def test_fail_on_and_timeout_per_build(write_matrix):
    path = write_matrix(
        "arch: [x86_64]\ntoolchain: [gcc]\nfail_on: warnings\ntimeout: 600\n"
        "include:\n  - {arch: arm64, toolchain: gcc, fail_on: never, timeout: 1.5}\n"
    )
    builds = {b.id: b for b in load(path).builds}
    assert (builds["x86_64-gcc-defconfig"].fail_on, builds["x86_64-gcc-defconfig"].timeout) == (
        "warnings",
        600.0,
    )
    assert (builds["arm64-gcc-defconfig"].fail_on, builds["arm64-gcc-defconfig"].timeout) == (
        "never",
        1.5,
    )
    plain = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n", name="plain.yaml")
    (b,) = load(plain).builds
    assert (b.fail_on, b.timeout) == ("", None)  # unset: the run's options hold


def test_targets_that_never_apply_to_the_arch_are_left_out(write_matrix):
    path = write_matrix(
        "arch: [arm64, x86_64]\ntoolchain: [gcc]\ntargets: [config, kernel, dtbs]\n"
        "include:\n  - {arch: x86_64, toolchain: gcc, name: only, targets: [dtbs]}\n"
    )
    builds = {b.id: b for b in load(path).builds}
    assert builds["arm64-gcc-defconfig"].targets == ("config", "kernel", "dtbs")
    assert builds["arm64-gcc-defconfig"].left_out == ()
    x86 = builds["x86_64-gcc-defconfig"]
    assert (x86.targets, [n for n, _ in x86.left_out]) == (("config", "kernel"), ["dtbs"])
    # nothing would be left: kept, so that the build says why it skips
    assert builds["x86_64-gcc-defconfig-only"].targets == ("dtbs",)
    assert builds["x86_64-gcc-defconfig-only"].left_out == ()


def test_timeout_per_target(write_matrix):
    path = write_matrix(
        "arch: [x86_64]\ntoolchain: [gcc]\ntimeout: {modules: 3600, kernel: 1800.5}\n"
        "targets: [config, kernel, modules]\n"
        "include:\n  - {arch: arm64, toolchain: gcc, timeout: {kernel: 60}}\n"
    )
    builds = {b.id: b for b in load(path).builds}
    x86 = builds["x86_64-gcc-defconfig"]
    assert x86.target_timeouts == (("kernel", "1800.5"), ("modules", "3600"))
    assert x86.timeout is None  # the other targets: the run's --kbuild-timeout
    assert builds["arm64-gcc-defconfig"].target_timeouts == (("kernel", "60"), ("modules", "3600"))


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("fail_on: sometimes", "matrix.fail_on: unknown policy 'sometimes'; accepted: never, "),
        ("fail_on: [warnings]", "matrix.fail_on: unknown policy ['warnings']"),
        ("timeout: -5", "matrix.timeout: -5 is not a positive number of seconds"),
        ("timeout: 10m", "matrix.timeout: '10m' is not a positive number of seconds"),
        ("timeout: true", "matrix.timeout: True is not a positive number of seconds"),
        ("timeout: {kernel: 0}", "matrix.timeout.kernel: timeout of target kernel: 0 is not a "),
        (
            "timeout: {kernl: 5}",
            "matrix.timeout.kernl: unknown target 'kernl'; known: bindeb-pkg, binrpm-pkg, boot, ",
        ),
        ("timeout: {kernel: [1]}", "matrix.timeout.kernel: timeout of target kernel: [1] is not"),
    ],
)
def test_bad_fail_on_or_timeout_names_line(write_matrix, line, problem):
    path = write_matrix(f"arch: [x86_64]\ntoolchain: [gcc]\n{line}\n")
    assert str(error(path)).startswith(f"{path}:3: {problem}")


def test_a_huge_unknown_arch_gives_a_message_of_bounded_length(write_matrix, kernel_tree):
    # Found by tests/unit/test_bad_input_properties.py.
    path = write_matrix(f"arch: [{'x' * 5000}]\ntoolchain: [gcc]\n")
    with pytest.raises(MatrixError) as exc:
        matrix.load(path, tree=kernel_tree)
    assert "unknown arch 'xxxx" in str(exc.value)
    assert "... (5000 characters); known: " in str(exc.value)
    assert len(str(exc.value)) < 2000


def test_a_tree_name_too_long_for_the_system_is_not_a_kernel_tree(write_matrix):
    # Found by tests/unit/test_bad_input_properties.py: OSError (ENAMETOOLONG)
    # from the tree check, a traceback at collection.
    path = write_matrix(f"tree: {'x' * 5000}\narch: [x86_64]\ntoolchain: [gcc]\n")
    with pytest.raises(NotAKernelTree) as exc:
        matrix.load(path)
    assert "characters) is not a kernel tree: File name too long (a tree has" in str(exc.value)
    assert len(str(exc.value)) < 1000


def test_a_kconfig_with_a_nul_byte_is_refused_at_load(write_matrix, kernel_tree):
    # Was accepted, and failed only at build time as "no such file".
    path = write_matrix('arch: [x86_64]\ntoolchain: [gcc]\nkconfig: ["a\\0b"]\n')
    with pytest.raises(
        MatrixError, match=r"matrix.kconfig\[0\]: kconfig 'a\\x00b': holds a NUL byte"
    ):
        matrix.load(path, tree=kernel_tree)


# -- gaps found by mutation testing (benchmarks/mutation.py matrix) ------------------------

HEAD = "arch: [x86_64]\ntoolchain: [gcc]\n"
MATRIX_ERRORS = {
    "exclude_not_mapping": HEAD + "exclude:\n  - {arch: x86_64, reason: ok}\n  - 5\n",
    "exclude_no_reason": HEAD + "exclude:\n  - {arch: x86_64, reason: ok}\n  - {arch: x86_64}\n",
    "exclude_no_axis": HEAD + "exclude:\n  - {arch: x86_64, reason: ok}\n  - {reason: why}\n",
    "include_not_mapping": HEAD + "include:\n  - {arch: x86_64, toolchain: clang}\n  - 5\n",
    "include_missing": HEAD
    + "include:\n  - {arch: x86_64, toolchain: clang}\n  - {arch: x86_64}\n",
    "include_bad_arch": HEAD
    + "include:\n  - toolchain: clang\n    arch: x86_64\n  - toolchain: clang\n    arch: nope\n",
    "include_bad_kconfig": HEAD
    + "include:\n  - toolchain: clang\n    arch: x86_64\n    kconfig: [1]\n",
    "include_kconfig_add": HEAD
    + "include:\n  - toolchain: clang\n    arch: x86_64\n    kconfig_add: {a: 1}\n",
    "include_targets": HEAD
    + "include:\n  - toolchain: clang\n    arch: x86_64\n    targets: {a: 1}\n",
    "variable_name": HEAD + "make_variables:\n  W: 1\n  A B: 2\n",
    "timeout_target": HEAD + "timeout:\n  kernel: 10\n  modules: -1\n",
    "unknown_key_long": HEAD
    + "include:\n  - toolchain: clang\n    arch: x86_64\n    "
    + "k" * 41
    + ": 1\n",
    "unknown_key_40": HEAD
    + "include:\n  - toolchain: clang\n    arch: x86_64\n    "
    + "k" * 40
    + ": 1\n",
    "list_got_mapping": HEAD + "kconfig_add: {a: 1}\n",
}
EXPECTED = [
    (
        "exclude_not_mapping",
        "M:5: matrix.exclude[1]: must be a mapping like {arch: arm64, reason: ...}",
    ),
    (
        "exclude_no_reason",
        "M:5: matrix.exclude[1]: needs a reason: (why this combination is not built)",
    ),
    ("exclude_no_axis", "M:5: matrix.exclude[1]: matches on none of arch, toolchain, kconfig"),
    (
        "include_not_mapping",
        "M:5: matrix.include[1]: must be a mapping like {arch: arm, toolchain: gcc, kconfig: ...}",
    ),
    ("include_missing", "M:5: matrix.include[1]: missing toolchain:"),
    (
        "include_bad_arch",
        "M:7: matrix.include[1].arch: unknown arch 'nope'; known: " + KNOWN_ARCHES,
    ),
    ("include_bad_kconfig", "M:6: matrix.include[0].kconfig: must be a string, got [1]"),
    ("include_kconfig_add", "M:6: matrix.include[0].kconfig_add: must be a list, got a mapping"),
    ("include_targets", "M:6: matrix.include[0].targets: must be a list, got a mapping"),
    (
        "variable_name",
        "M:5: matrix.make_variables.A B: 'A B' is not a variable name (letters, digits, _)",
    ),
    (
        "timeout_target",
        "M:5: matrix.timeout.modules: timeout of target modules: -1 is not a positive number of seconds",
    ),
    (
        "unknown_key_long",
        "M:6: matrix.include[0].'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...: unknown key 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk'; accepted: arch, toolchain, kconfig, kconfig_add, targets, make_variables, env, wrapper, runtime, fail_on, timeout, name",
    ),
    (
        "unknown_key_40",
        "M:6: matrix.include[0].kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: unknown key 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk'; accepted: arch, toolchain, kconfig, kconfig_add, targets, make_variables, env, wrapper, runtime, fail_on, timeout, name",
    ),
    ("list_got_mapping", "M:3: matrix.kconfig_add: must be a list, got a mapping"),
]


@pytest.mark.parametrize(("name", "message"), EXPECTED)
def test_an_error_names_the_line_and_key_of_the_entry_at_fault(
    write_matrix, kernel_tree, name, message
):
    path = write_matrix(MATRIX_ERRORS[name])
    with pytest.raises(MatrixError) as exc:
        matrix.load(path, tree=kernel_tree)
    assert str(exc.value).replace(str(path), "M") == message


def test_an_include_build_has_the_line_of_its_entry(write_matrix, kernel_tree):
    path = write_matrix(
        HEAD + "include:\n  - {arch: x86_64, toolchain: clang}\n"
        "  - {arch: x86_64, toolchain: clang, kconfig: tinyconfig}\n"
    )
    builds = matrix.load(path, tree=kernel_tree).builds
    assert [(b.id, b.line, b.skip_reason) for b in builds] == [
        ("x86_64-clang-defconfig", 4, ""),
        ("x86_64-clang-tinyconfig", 5, ""),
        ("x86_64-gcc-defconfig", 1, ""),
    ]


def test_a_control_character_is_invalid_yaml_without_a_line(write_matrix):
    # PyYAML's reader error has no mark and no problem of its own: its text.
    path = write_matrix("toolchain: [gcc]\narch: [x86\x07_64]\n")
    err = error(path)
    assert str(err).startswith(f"{path}: invalid YAML: unacceptable character #x0007: ")
    assert err.line is None


def test_a_build_has_the_line_of_its_arch_value_in_any_yaml_style(write_matrix, kernel_tree):
    path = write_matrix("toolchain: [gcc]\narch:\n  - x86_64\n  - arm64\n")
    builds = matrix.load(path, tree=kernel_tree).builds
    assert [(b.id, b.line) for b in builds] == [
        ("arm64-gcc-defconfig", 4),
        ("x86_64-gcc-defconfig", 3),
    ]
    # a single value instead of a list: the line of its key
    path = write_matrix("toolchain: [gcc]\nkconfig: tinyconfig\narch: arm64\n", "one.yaml")
    assert [(b.id, b.line) for b in matrix.load(path, tree=kernel_tree).builds] == [
        ("arm64-gcc-tinyconfig", 3)
    ]


@pytest.mark.parametrize(
    ("value", "got"),
    [
        ("true", "a boolean"),
        ("5", "a number"),
        ("1.5", "a number"),
        ("x86_64", "a string"),
        ("{arch: x86_64}", "a mapping"),
        ("2024-01-01", "date"),  # any other YAML type: its Python name
    ],
)
def test_a_list_key_says_what_it_got_instead(write_matrix, value, got):
    path = write_matrix(HEAD + f"exclude: {value}\n")
    assert str(error(path)) == f"{path}:3: matrix.exclude: must be a list, got {got}"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("A " + "B" * 38, "A " + "B" * 38),  # up to 40 characters: as written
        ("A " + "B" * 39, "'A " + "B" * 34 + "..."),  # longer: a repr cut at 40
    ],
)
def test_a_long_variable_name_is_cut_in_the_location(write_matrix, name, shown):
    path = write_matrix(HEAD + f"make_variables:\n  W: 1\n  {name}: 2\n")
    assert str(error(path)).startswith(f"{path}:5: matrix.make_variables.{shown}: ")


PLAN = """
version: 1
jobs:
- name: one
  build: {target_arch: x86_64, toolchain: gcc-12, kconfig: tinyconfig}
- name: two
  build: {target_arch: arm64, toolchain: gcc-12, kconfig: tinyconfig}
"""


def test_load_passes_its_arguments_on_to_a_tuxsuite_plan(write_matrix, kernel_tree, tmp_path):
    path = write_matrix(PLAN, "plan.yaml")
    plan = matrix.load(path, tree=kernel_tree, check=True, jobs=["one"], runtimes=["local"])
    assert (plan.tree, [b.id for b in plan.builds]) == (
        kernel_tree,
        ["x86_64-gcc-12-tinyconfig-one"],
    )
    with pytest.raises(NotAKernelTree, match=r"^--my-tree: '.*/nowhere' is not a kernel tree"):
        matrix.load(path, tree=tmp_path / "nowhere", tree_where="--my-tree")
    unchecked = matrix.load(path, tree=tmp_path / "nowhere", check=False)
    assert unchecked.tree == tmp_path / "nowhere" and len(unchecked.builds) == 2


# -- toolchains from a directory ------------------------------------------------------------


def test_toolchain_from_a_directory_as_string_and_mapping(write_matrix, tmp_path):
    llvm = llvm_dir(tmp_path / "tools" / "llvm" / "bin")
    path = write_matrix(
        f"""
        arch: [arm64]
        toolchain:
          - llvm@{llvm}
          - {{name: llvm-mine, path: tools/llvm/bin}}
        kconfig: [tinyconfig]
        """
    )
    builds = {b.id: b for b in load(path).builds}
    assert sorted(builds) == ["arm64-llvm-16-tinyconfig", "arm64-llvm-mine-tinyconfig"]
    assert builds["arm64-llvm-16-tinyconfig"].toolchain == f"llvm-16@{llvm}"
    # a relative directory is the matrix file's
    assert builds["arm64-llvm-mine-tinyconfig"].toolchain == f"llvm-mine@{llvm}"


def test_a_single_toolchain_mapping_is_a_list_of_one(write_matrix, tmp_path):
    llvm = llvm_dir(tmp_path / "bin")
    path = write_matrix(f"arch: arm64\ntoolchain: {{name: llvm-16, path: {llvm}}}\n")
    assert [b.id for b in load(path).builds] == ["arm64-llvm-16-defconfig"]


def test_an_exclude_names_a_directory_toolchain_either_way(write_matrix, tmp_path):
    llvm = llvm_dir(tmp_path / "bin")
    path = write_matrix(
        f"""
        arch: [arm64, x86_64]
        toolchain: [llvm@{llvm}]
        exclude: [{{arch: x86_64, toolchain: {{name: llvm-16, path: {llvm}}}, reason: arm only}}]
        """
    )
    reasons = {b.id: b.skip_reason for b in load(path).builds}
    assert reasons["x86_64-llvm-16-defconfig"] == "excluded by matrix.exclude[0]: arm only"
    assert reasons["arm64-llvm-16-defconfig"] == ""


def test_one_directory_in_both_forms_is_a_duplicate_build(write_matrix, tmp_path):
    llvm = llvm_dir(tmp_path / "bin")
    path = write_matrix(f"arch: [arm64]\ntoolchain: [llvm@{llvm}, {{name: llvm-16, path: bin}}]\n")
    assert "duplicate build id 'arm64-llvm-16-defconfig'" in str(error(path))


def test_a_missing_toolchain_directory_is_an_error_at_its_line(write_matrix, tmp_path):
    missing = tmp_path / "nowhere"
    path = write_matrix(f"arch: [arm64]\ntoolchain:\n  - gcc\n  - llvm@{missing}\n")
    assert str(error(path)) == (
        f"{path}:4: matrix.toolchain[1]: toolchain 'llvm@{missing}': {missing} is not a "
        "directory; llvm@DIR names a directory holding clang"
    )


def test_an_unknown_toolchain_version_is_an_error_saying_what_to_do(write_matrix):
    path = write_matrix("arch: [arm64]\ntoolchain: [clang-22]\n")
    message = str(error(path))
    assert message.startswith(f"{path}:2: matrix.toolchain[0]: unknown toolchain 'clang-22'; ")
    assert "clang-N is Debian's package for N in 10..19; for another, give its directory" in message
