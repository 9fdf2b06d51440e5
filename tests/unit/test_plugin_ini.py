"""The ini keys kbuild_<name> from pyproject.toml, pytest.ini and tox.ini,
each read as the type its setting declares (plugin/ini.py): in-process
pytester runs on a FakeRuntime and a fake tree, as test_plugin_inprocess.py."""

from __future__ import annotations

import json
import os
import warnings

import pytest
from fakes import FakeRuntime, make_tree

PYTEST_9 = int(pytest.__version__.split(".")[0]) >= 9
BODY = "arch: [x86_64]\ntoolchain: [gcc]\nkconfig: [tinyconfig]\nruntime: fake\ntargets: [config]\n"


class FakeRuntimes:
    @pytest.hookimpl
    def pytest_kbuild_make_runtime(self, config, name):
        return FakeRuntime() if name == "fake" else None


@pytest.fixture
def matrices(pytester, tmp_path):
    """a.yaml and b.yaml in the ini file's directory, and m/c.yaml."""
    tree = make_tree(tmp_path / "linux")
    for name in ("a.yaml", "b.yaml", "m/c.yaml"):
        path = pytester.path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"tree: {tree}\n{BODY}")


def write(pytester, kind, body):
    if kind == "pyproject.toml":
        pytester.makepyprojecttoml("[tool.pytest.ini_options]\n" + body)
    elif kind == "[tool.pytest]":  # pytest 9's own TOML table, values typed
        pytester.makepyprojecttoml("[tool.pytest]\n" + body)
    else:  # pytest.ini or tox.ini (pytester.maketoxini is pytest >= 8.1)
        name = kind.removesuffix(".ini")
        pytester.makefile(".ini", **{name: "[pytest]\n" + body})


def run(pytester, *args):
    """The run, and the warnings it gave about its configuration."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "-W", "error::pytest.PytestConfigWarning", *args,
            plugins=[FakeRuntimes()],
        )  # fmt: skip
    config_warnings = [
        str(w.message)
        for w in caught
        if issubclass(w.category, (pytest.PytestConfigWarning, DeprecationWarning))
    ]
    return result, config_warnings


def options(pytester, matrix, results="kbuild-results"):
    path = pytester.path / results / matrix / "x86_64-gcc-tinyconfig" / "metadata.json"
    return json.loads(path.read_text())["options"]


TOML = (
    'kbuild_matrix = ["a.yaml", "b.yaml"]\nkbuild_fail_fast = true\nkbuild_reproducible = false\n'
)
KINDS = [
    pytest.param("pyproject.toml", TOML + "kbuild_jobs = 2\n", id="pyproject-array"),
    pytest.param(
        "[tool.pytest]",
        TOML + 'kbuild_jobs = "2"\n',
        id="tool.pytest",
        marks=pytest.mark.skipif(not PYTEST_9, reason="[tool.pytest] is pytest >= 9"),
    ),
    pytest.param(
        "pytest.ini",
        f"kbuild_matrix = a.yaml{os.pathsep}b.yaml\nkbuild_fail_fast = on\n"
        "kbuild_reproducible = off\nkbuild_jobs = 2\n",
        id="pytest.ini-pathsep",
    ),
    pytest.param(
        "tox.ini",
        "kbuild_matrix =\n    a.yaml\n    b.yaml\nkbuild_fail_fast = yes\nkbuild_reproducible = false\n"
        "kbuild_jobs = 2\n",
        id="tox.ini-lines",
    ),
    pytest.param(
        "pytest.ini",
        "kbuild_matrix = a.yaml b.yaml\nkbuild_fail_fast = 1\nkbuild_reproducible = 0\n"
        "kbuild_jobs = 2\n",
        id="pytest.ini-spaces",
    ),
]


@pytest.mark.parametrize(("kind", "body"), KINDS)
@pytest.mark.usefixtures("matrices")
def test_two_matrices_and_booleans_from_the_ini_file(pytester, kind, body):
    # Bug: kbuild_matrix = ["a.yaml", "b.yaml"] was read as one string,
    # "['a.yaml', 'b.yaml']", with pytest's warning that an untyped ini key
    # given a list breaks in pytest 10; a.yaml:b.yaml was one file too.
    write(pytester, kind, body)
    result, config_warnings = run(pytester)
    result.assert_outcomes(passed=2)
    assert config_warnings == []
    for matrix in ("a", "b"):
        assert options(pytester, matrix)["fail_fast"] is True
        assert options(pytester, matrix)["reproducible"] is False
        assert options(pytester, matrix)["jobs"] == 2


@pytest.mark.usefixtures("matrices")
def test_an_ini_false_is_a_value_and_an_absent_key_the_default(pytester):
    write(pytester, "pyproject.toml", 'kbuild_matrix = ["a.yaml"]\nkbuild_fail_fast = false\n')
    result, config_warnings = run(pytester)
    result.assert_outcomes(passed=1)
    assert config_warnings == []
    got = options(pytester, "a")
    assert got["fail_fast"] is False and got["reproducible"] is True


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("pyproject.toml", 'kbuild_matrix = ["m/c.yaml"]\nkbuild_results = "out"\n'),
        ("tox.ini", "kbuild_matrix = m/c.yaml\nkbuild_results = out\n"),
    ],
    ids=["pyproject", "tox.ini"],
)
@pytest.mark.usefixtures("matrices")
def test_paths_are_relative_to_the_ini_files_directory(pytester, monkeypatch, kind, body):
    write(pytester, kind, body)
    (pytester.path / "sub").mkdir()
    monkeypatch.chdir(pytester.path / "sub")  # pytest finds the ini file above
    result, config_warnings = run(pytester)
    result.assert_outcomes(passed=1)
    assert config_warnings == []
    assert options(pytester, "c", results="out")["fail_fast"] is False
    assert not (pytester.path / "sub" / "out").exists()


BOOL = "true/false, yes/no, on/off, 1/0"


@pytest.mark.parametrize(
    ("kind", "body", "message"),
    [
        (
            "pyproject.toml",
            'kbuild_fail_fast = "maybe"\n',
            f"kbuild_fail_fast: invalid truth value 'maybe'; accepted: {BOOL}",
        ),
        (
            "pytest.ini",
            "kbuild_keep_build_dir = sometimes\n",
            f"kbuild_keep_build_dir: invalid truth value 'sometimes'; accepted: {BOOL}",
        ),
        ("tox.ini", "kbuild_jobs = many\n", "kbuild_jobs: 'many' is not a positive whole number"),
        (  # pytest 9 warns and passes the list on; pytest 10 is to reject it itself
            "pyproject.toml",
            'kbuild_tree = ["a", "b"]\n',
            "kbuild_tree: ['a', 'b'] is a list; accepted: one value, a string",
        ),
        pytest.param(
            "[tool.pytest]",
            "kbuild_jobs = 2\n",
            "*pyproject.toml: config option 'kbuild_jobs' expects a string, got int: 2; "
            "accepted: one value, a string",
            marks=pytest.mark.skipif(not PYTEST_9, reason="[tool.pytest] is pytest >= 9"),
        ),
    ],
)
@pytest.mark.usefixtures("matrices")
def test_a_bad_ini_value_is_a_usage_error_naming_the_key(pytester, kind, body, message):
    toml = kind in ("pyproject.toml", "[tool.pytest]")
    matrix = 'kbuild_matrix = ["a.yaml"]\n' if toml else "kbuild_matrix = a.yaml\n"
    write(pytester, kind, matrix + body)
    result, _ = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
