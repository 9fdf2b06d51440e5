"""pytest-kbuild as the CI examples install it: a wheel built from a checkout
(it is not on PyPI). Every data file must be in it, its license and
classifiers too, and its commands must work from it, not from this checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from tests.support import ROOT

PACKAGE = ROOT / "pytest_kbuild"


def _wheel(tmp_path: Path) -> Path:
    # A copy of what the wheel is built from, so the build writes nothing here.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(PACKAGE, src / "pytest_kbuild", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "wheels"
    # No isolation: the dev extra's setuptools builds it, and pip says so
    # when that one is older than [build-system] requires.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["--check-build-dependencies", "--wheel-dir", str(out), str(src)],
        check=True,
        timeout=300,
    )
    (wheel,) = out.glob("pytest_kbuild-*.whl")
    return wheel


def test_the_wheel_holds_every_data_file_and_its_commands_run_from_it(tmp_path):
    wheel = _wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    data = {
        p.relative_to(ROOT).as_posix()
        for p in (PACKAGE / "data").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert data and data - names == set()
    _check_license_and_classifiers(wheel, names)
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site)]
        + [str(wheel)],
        check=True,
        timeout=300,
    )
    code = (
        "import sys, pytest_kbuild; from pytest_kbuild.cli import main; "
        "print(pytest_kbuild.__file__); sys.exit(main(sys.argv[1:]))"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", code, "packages", str(ROOT / "matrices" / "smoke.yaml")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    where, packages = done.stdout.splitlines()
    assert Path(where).is_relative_to(site)
    assert {"make", "clang-16", "gcc-riscv64-linux-gnu", "rsync"} <= set(packages.split())


CLASSIFIERS = {
    "Framework :: Pytest",
    "Operating System :: POSIX :: Linux",
    "Programming Language :: Python :: 3.10",
    "Programming Language :: Python :: 3.11",
    "Topic :: Software Development :: Build Tools",
}


def _check_license_and_classifiers(wheel: Path, names: set[str]) -> None:
    """The MIT license ships as a file and an SPDX expression (PEP 639), and
    the classifiers say what the project is."""
    (info,) = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
    assert f"{info}/licenses/LICENSE" in names
    with zipfile.ZipFile(wheel) as zf:
        shipped = zf.read(f"{info}/licenses/LICENSE").decode()
        meta = Parser().parsestr(zf.read(f"{info}/METADATA").decode())
    assert shipped == (ROOT / "LICENSE").read_text() and shipped.startswith("MIT License")
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    classifiers = set(meta.get_all("Classifier") or [])
    assert CLASSIFIERS - classifiers == set()
    assert not {c for c in classifiers if c.startswith("License ::")}  # the expression says it
