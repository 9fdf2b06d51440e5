import pytest

from pytest_kbuild import errors
from pytest_kbuild.errors import (
    DefinitionError,
    DurationsError,
    KbuildError,
    KbuildInfraError,
    KbuildUserError,
    KcidbError,
    KconfigError,
    KconfigFetchError,
    MatrixError,
    MergeError,
    NotAKernelTree,
    ShardError,
    ToolNotFound,
    UnknownDefinition,
)


@pytest.mark.parametrize(
    ("cls", "base"),
    [
        (errors.UnknownArch, UnknownDefinition),
        (errors.UnknownToolchain, UnknownDefinition),
        (errors.UnknownTarget, UnknownDefinition),
        (errors.UnknownWrapper, UnknownDefinition),
        (errors.UnknownRuntime, UnknownDefinition),
        (UnknownDefinition, KbuildUserError),
        (DefinitionError, KbuildUserError),
        (MatrixError, KbuildUserError),
        (NotAKernelTree, KbuildUserError),
        (KconfigError, KbuildUserError),
        (KconfigFetchError, KbuildInfraError),
        (ToolNotFound, KbuildInfraError),
        (ShardError, KbuildUserError),
        (DurationsError, KbuildUserError),
        (MergeError, KbuildUserError),
        (KcidbError, KbuildUserError),
        (KbuildUserError, KbuildError),
        (KbuildInfraError, KbuildError),
    ],
)
def test_hierarchy(cls, base):
    assert issubclass(cls, base)


@pytest.mark.parametrize(
    ("cls", "kind"),
    [
        (errors.UnknownArch, "arch"),
        (errors.UnknownToolchain, "toolchain"),
        (errors.UnknownTarget, "target"),
        (errors.UnknownWrapper, "wrapper"),
        (errors.UnknownRuntime, "runtime"),
    ],
)
def test_unknown_messages(cls, kind):
    err = cls("x", ["b", "a"], "m.yaml:3: matrix.k")
    assert str(err) == f"m.yaml:3: matrix.k: unknown {kind} 'x'; known: a, b"
    assert (err.kind, err.name) == (kind, "x")
    assert str(cls("x", [])) == f"unknown {kind} 'x'; known: (none)"


def test_matrix_error_formats():
    err = MatrixError("m.yaml", "bad", "matrix.arch[1]", 4)
    assert str(err) == "m.yaml:4: matrix.arch[1]: bad"
    assert (err.path, err.key, err.line, err.problem) == ("m.yaml", "matrix.arch[1]", 4, "bad")
    assert str(MatrixError("m.yaml", "bad", "matrix")) == "m.yaml: matrix: bad"
    assert str(MatrixError("m.yaml", "bad", line=2)) == "m.yaml:2: bad"
    assert str(MatrixError("m.yaml", "bad")) == "m.yaml: bad"


def test_definition_error():
    err = DefinitionError("/d/arch/x.yaml", "missing key 'srcarch'")
    assert str(err) == "/d/arch/x.yaml: missing key 'srcarch'"
    assert err.path == "/d/arch/x.yaml"


def test_not_a_kernel_tree():
    err = NotAKernelTree("/src", ["Kconfig", "Kbuild"], "--kbuild-tree")
    assert str(err) == (
        "--kbuild-tree: '/src' is not a kernel tree: missing Kconfig, Kbuild "
        "(a tree has Makefile, Kconfig and Kbuild at its top)"
    )
    assert err.path == "/src"
    assert str(NotAKernelTree("/src", ["Kbuild"])).startswith("'/src' is not a kernel tree")


def test_kconfig_errors():
    err = KconfigError("x.config", "no such file")
    assert str(err) == "kconfig 'x.config': no such file"
    assert err.value == "x.config"
    err = KconfigFetchError("http://h/c", "HTTP 500 Internal Server Error")
    assert str(err) == "cannot fetch kconfig 'http://h/c': HTTP 500 Internal Server Error"
    assert err.url == "http://h/c"


def test_tool_not_found():
    err = ToolNotFound("gcc", "toolchain gcc for x86_64", "on Debian install: gcc")
    assert str(err) == "toolchain gcc for x86_64: 'gcc' not found on PATH; on Debian install: gcc"
    assert err.tool == "gcc"
    assert str(ToolNotFound("xz", "debugkernel")) == "debugkernel: 'xz' not found on PATH"


def test_shard_error():
    err = ShardError("5/4", "--kbuild-shard", "has index 5 outside 1..4", "I/N")
    assert str(err) == "--kbuild-shard: '5/4' has index 5 outside 1..4; accepted: I/N"
    assert (err.value, err.where) == ("5/4", "--kbuild-shard")


def test_durations_error():
    err = DurationsError("d.json", "PYTEST_KBUILD_DURATIONS", "is not JSON")
    assert str(err) == (
        "PYTEST_KBUILD_DURATIONS: 'd.json': is not JSON; accepted: the results.json of an "
        'earlier run or a JSON object {"<matrix>::<build id>": seconds}'
    )
    assert (err.path, err.where) == ("d.json", "PYTEST_KBUILD_DURATIONS")


def test_merge_error():
    err = MergeError("shard-1/results.json", "is not a results.json")
    assert str(err) == "shard-1/results.json: is not a results.json"
    assert err.what == "shard-1/results.json"


def test_quoted_cuts_a_huge_value_and_says_how_long_it_was():
    assert errors.quoted("arm64") == "'arm64'"
    assert errors.quoted("x" * 200) == repr("x" * 200)
    assert errors.quoted("x" * 5000) == f"{'x' * 200!r}... (5000 characters)"
    assert errors.quoted("a\0b" * 10, limit=4) == "'a\\x00ba'... (30 characters)"


@pytest.mark.parametrize(
    "make",
    [
        lambda v: errors.UnknownArch(v, ["arm64", "x86_64"]),
        lambda v: errors.KconfigError(v, "no such file"),
        lambda v: errors.KconfigFetchError(v, "HTTP 404 Not Found"),
        lambda v: errors.KconfigNotAConfig("https://e/x", "an empty body", v),
        lambda v: errors.ShardError(v, "--kbuild-shard", "is not I/N", "I/N"),
    ],
)
def test_a_huge_value_gives_a_message_of_bounded_length(make):
    # Found by tests/unit/test_bad_input_properties.py: a 5000-character
    # value made a 5000-character message.
    message = str(make("9" * 5000))
    assert len(message) < 500
    assert "... (5000 characters)" in message
