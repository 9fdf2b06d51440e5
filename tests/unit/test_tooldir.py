"""definitions/tooldir.py: a toolchain directory's compiler files and the
version its compiler prints."""

import os

import pytest

from pytest_kbuild.definitions import tooldir
from tests.support import gcc_dir, llvm_dir, old_gcc_dir


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("Debian clang version 16.0.6 (15~deb12u1)\nTarget: x86_64-pc-linux-gnu\n", "16.0.6"),
        ("clang version 21.1.0 (https://github.com/llvm/llvm-project 3623fe661ae3)", "21.1.0"),
        ("Ubuntu clang version 14.0.0-1ubuntu1.1", "14.0.0"),
        ("aarch64-linux-gcc (GCC) 14.2.0\nCopyright (C) 2024", "14.2.0"),
        ("x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14) 12.2.0", "12.2.0"),
        ("12.2.0\n", "12.2.0"),
        ("\n\n  5.1\n", "5.1"),
        ("gcc-12 (no version here)", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_version(text, version):
    assert tooldir.parse_version(text) == version


@pytest.mark.parametrize(
    ("version", "minimum", "older"),
    [
        ("4.9.4", "5.1.0", True),
        ("5.1", "5.1.0", False),
        ("5.1.0", "5.1", False),
        ("10.0.1", "11.0.0", True),
        ("16.0.6", "11.0.0", False),
        ("14.2.0", "15.0.0", True),  # s390's llvm minimum
    ],
)
def test_older(version, minimum, older):
    assert tooldir.older(version, minimum) is older


def test_find_tries_patterns_in_turn_and_names_in_order(tmp_path):
    for name in ("zz-linux-gcc", "aa-linux-gcc", "gcc", "notes-gcc"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    (tmp_path / "notes-gcc").chmod(0o644)  # not executable: never a compiler
    assert tooldir.find(str(tmp_path), ["gcc", "*-gcc"]) == str(tmp_path / "gcc")
    assert tooldir.find(str(tmp_path), ["*-gcc"]) == str(tmp_path / "aa-linux-gcc")
    assert tooldir.find(str(tmp_path), ["clang"]) is None
    assert tooldir.find(str(tmp_path / "nowhere"), ["gcc"]) is None


def test_probe_of_a_real_clang_and_gcc(tmp_path):
    clang = str(llvm_dir(tmp_path / "llvm") / "clang")
    version, why = tooldir.probe(clang, ("--version",))
    assert version is not None and version.startswith("16.") and why == ""
    gcc = str(gcc_dir(tmp_path / "gcc") / "aarch64-linux-gcc")
    version, why = tooldir.probe(gcc, ("-dumpfullversion",))
    assert version is not None and version.count(".") == 2 and why == ""


def test_probe_of_a_script(tmp_path):
    gcc = old_gcc_dir(tmp_path) / "gcc"
    assert tooldir.probe(str(gcc), ("-dumpfullversion",)) == ("4.9.4", "")


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("echo broken >&2; exit 3", "exited with status 3: broken"),
        ("echo no number here", "printed no version number (its first line: 'no number here')"),
    ],
)
def test_probe_says_why_a_compiler_gives_no_version(tmp_path, body, why):
    cc = tmp_path / "cc"
    cc.write_text(f"#!/bin/sh\n{body}\n")
    cc.chmod(0o755)
    version, said = tooldir.probe(str(cc), ("--version",))
    assert version is None
    assert said == f"`{cc} --version` {why}"


def test_probe_of_a_file_that_does_not_run(tmp_path):
    cc = tmp_path / "cc"
    cc.write_bytes(b"\x7fELF garbage")
    cc.chmod(0o755)
    version, why = tooldir.probe(str(cc), ("--version",))
    assert version is None and why.startswith(f"cannot run {cc}: ")
    assert os.path.isfile(cc)
