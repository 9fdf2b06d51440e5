"""pytest_kbuild/__init__.py: the public names, imported only when used."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import pytest_kbuild
from pytest_kbuild import errors, matrix, results
from pytest_kbuild.build import build


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running *code*."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out))


def test_importing_the_package_imports_no_submodule_and_nothing_heavy():
    # pytest imports the package in every run of every project (its entry
    # point is pytest_kbuild.plugin): a matrix-less run must not pay for these.
    loaded = modules_after("import pytest_kbuild")
    assert "pytest_kbuild" in loaded
    assert not {m for m in loaded if m.startswith("pytest_kbuild.")}
    assert not loaded & {"yaml", "requests", "urllib3", "pytest"}


def test_kconfig_imports_requests_only_to_fetch():
    assert "requests" not in modules_after("import pytest_kbuild.kconfig")


def test_public_names_are_the_modules_objects():
    assert pytest_kbuild.Build is build.Build
    assert pytest_kbuild.load_matrix is matrix.load
    assert pytest_kbuild.BuildSpec is matrix.BuildSpec
    assert pytest_kbuild.Status is results.Status
    assert pytest_kbuild.KbuildUserError is errors.KbuildUserError


def test_every_name_in_all_resolves_and_is_listed_by_dir():
    for name in pytest_kbuild.__all__:
        assert getattr(pytest_kbuild, name) is not None
    assert set(pytest_kbuild.__all__) <= set(dir(pytest_kbuild))


def test_from_import_works_in_a_fresh_interpreter():
    loaded = modules_after("from pytest_kbuild import Build, Status")
    assert {"pytest_kbuild.build", "pytest_kbuild.results"} <= loaded


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match=r"^module 'pytest_kbuild' has no attribute 'Nope'$"):
        pytest_kbuild.Nope  # noqa: B018
    with pytest.raises(ImportError):
        from pytest_kbuild import Nope  # noqa: F401


def test_a_pytest_run_without_a_matrix_imports_only_the_entry_point(pytester):
    # Bug: the installed plugin added ~0.8 s to every pytest start; the
    # hooks then imported the run state (build, matrix, yaml) to find none.
    pytester.makeconftest(
        """
        import json, sys
        def pytest_sessionfinish(session):
            mods = sorted(m for m in sys.modules if m.startswith(("pytest_kbuild", "yaml", "requests")))
            open("modules.json", "w").write(json.dumps(mods))
        """
    )
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    loaded = set(json.loads((pytester.path / "modules.json").read_text()))
    assert loaded <= {
        "pytest_kbuild",
        "pytest_kbuild.errors",
        "pytest_kbuild.hookspecs",
        "pytest_kbuild.options",
        "pytest_kbuild.parsers",
        "pytest_kbuild.plugin",
        "pytest_kbuild.plugin.hooks",
        "pytest_kbuild.plugin.ini",  # the typed ini keys, declared in pytest_addoption
        "pytest_kbuild.plugin.keys",
        "pytest_kbuild.settings",
    }, loaded
