import json
import os
import subprocess
import sys
from importlib import metadata

import pytest

from pytest_kbuild import definitions, runtime
from pytest_kbuild.cli import commands as cli
from pytest_kbuild.cli import kbuild as kbuild_cli
from pytest_kbuild.cli.commands import (
    EXIT_FAILED,
    EXIT_INFRA,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    kbuild_main,
    main,
)
from pytest_kbuild.definitions import toolchain
from pytest_kbuild.results import METADATA


def test_exit_codes():
    assert (EXIT_OK, EXIT_INPUT, EXIT_FAILED) == (0, 1, 2)
    assert (EXIT_INFRA, EXIT_INTERRUPTED) == (125, 130)


# -- pytest-kbuild list -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("arch", definitions.available("arch")),
        ("target", definitions.available("target")),
        ("wrapper", definitions.available("wrapper")),
        ("toolchain", toolchain.known()),
        ("runtime", runtime.available()),
    ],
)
def test_list(capsys, kind, expected):
    assert main(["list", kind]) == EXIT_OK
    out, err = capsys.readouterr()
    assert out.splitlines() == list(expected)
    assert err == ""


def test_list_names():
    assert "x86_64" in definitions.available("arch")
    assert "gcc-12" in toolchain.known()
    assert "local" in runtime.available()


def test_list_unknown_kind(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["list", "compiler"])
    assert exc.value.code == 2
    assert "invalid choice: 'compiler'" in capsys.readouterr().err


# -- pytest-kbuild expand -----------------------------------------------------------------

MATRIX = """\
arch: [x86_64]
toolchain: [gcc, clang]
kconfig: [defconfig, https://example.com/configs/my.config]
targets: [kernel, config]
kconfig_add: [CONFIG_X=y]
exclude: [{toolchain: clang, kconfig: defconfig, reason: not today}]
"""


def test_expand(capsys, write_matrix):
    path = write_matrix(MATRIX)
    assert main(["expand", str(path)]) == EXIT_OK
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "x86_64-clang-defconfig: config kernel  # skipped: excluded by matrix.exclude[0]: not today",
        "x86_64-clang-my.config: config kernel",
        "x86_64-gcc-defconfig: config kernel",
        "x86_64-gcc-my.config: config kernel",
    ]
    assert err == ""


def test_expand_json(capsys, write_matrix):
    path = write_matrix(MATRIX)
    assert main(["expand", "--json", str(path)]) == EXIT_OK
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0] == {
        "id": "x86_64-clang-defconfig",
        "arch": "x86_64",
        "toolchain": "clang",
        "kconfig": "defconfig",
        "kconfig_add": ["CONFIG_X=y"],
        "targets": ["config", "kernel"],
        "skip": "excluded by matrix.exclude[0]: not today",
        "left_out": {},
    }
    assert rows[1]["kconfig"] == "https://example.com/configs/my.config"
    assert rows[1]["skip"] is None
    assert len(rows) == 4


def test_expand_a_plan_shows_jobs_and_skip_items(capsys, write_matrix):
    path = write_matrix(
        "version: 1\njobs:\n- name: j\n"
        "  build: {target_arch: x86_64, toolchain: gcc, targets: [kernel, dtbs-legacy]}\n"
    )
    assert main(["expand", str(path)]) == EXIT_OK
    line = capsys.readouterr().out.strip()
    assert line.startswith("x86_64-gcc-defconfig-j: kernel  # SKIP dtbs-legacy: TuxMake target")
    assert main(["expand", "--json", str(path)]) == EXIT_OK
    row = json.loads(capsys.readouterr().out)
    assert row["job"] == "j" and list(row["unavailable"]) == ["dtbs-legacy"]


def test_expand_does_not_check_the_tree_without_tree_option(capsys, write_matrix):
    path = write_matrix("tree: nowhere\narch: [x86_64]\ntoolchain: [gcc]\ntargets: [config]\n")
    assert main(["expand", str(path)]) == EXIT_OK
    assert capsys.readouterr().out == "x86_64-gcc-defconfig: config\n"


def test_expand_with_tree(capsys, write_matrix, kernel_tree):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config]\n")
    assert main(["expand", "--tree", str(kernel_tree), str(path)]) == EXIT_OK


def test_expand_bad_matrix(capsys, write_matrix):
    path = write_matrix("arch: [x86_64, vax]\ntoolchain: [gcc]\n")
    assert main(["expand", str(path)]) == EXIT_INPUT
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"E: {path}:1: matrix.arch[1]: unknown arch 'vax'; known: ")


def test_expand_missing_matrix(capsys, tmp_path):
    path = tmp_path / "nope.yaml"
    assert main(["expand", str(path)]) == EXIT_INPUT
    assert capsys.readouterr().err == (
        f"E: {path}: cannot read matrix: No such file or directory\n"
    )


def test_expand_tree_not_a_tree(capsys, write_matrix, tmp_path):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n")
    assert main(["expand", "--tree", str(tmp_path / "empty"), str(path)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert f"{str(tmp_path / 'empty')!r} is not a kernel tree: missing Makefile" in err


def test_expand_tree_error_names_the_tree_option(capsys, write_matrix, tmp_path):
    path = write_matrix("arch: [x86_64]\ntoolchain: [gcc]\n")
    main(["expand", "--tree", str(tmp_path / "empty"), str(path)])
    assert capsys.readouterr().err.startswith("E: --tree: ")


# -- kbuild: bad input exits 1 before any build ------------------------------------------------


@pytest.fixture
def kbuild(capsys, kernel_tree, tmp_path):
    """kbuild(*args) -> (exit status, stdout, stderr) with -C tree -a x86_64 -o/-b in tmp."""

    def run(*args, tree=kernel_tree):
        argv = ["-C", str(tree), "-o", str(tmp_path / "out"), "-b", str(tmp_path / "b")]
        if not any(a in ("-a", "--target-arch") for a in args):
            argv += ["-a", "x86_64"]
        rc = kbuild_main([*argv, *args])
        out, err = capsys.readouterr()
        return rc, out, err

    return run


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-a", "vax"], "E: target arch: unknown arch 'vax'; known: "),
        (["-t", "gcc-99"], "E: toolchain: unknown toolchain 'gcc-99'; known: "),
        (["-w", "distcc"], "E: wrapper: unknown wrapper 'distcc'; known: "),
        (["-r", "no-such-runtime"], "E: runtime: unknown runtime 'no-such-runtime'; known: "),
        (["kernel", "bzImage"], "E: targets: unknown target 'bzImage'; known: "),
        (["-K", "CONFIG_X=maybe"], "E: kconfig 'CONFIG_X=maybe': not a valid option; accepted: "),
        (["-K", "make:"], "E: kconfig 'make:': make: needs a target"),
        (
            ["O=/tmp/elsewhere"],
            "E: make variable O cannot be set: the build directory is set by pytest-kbuild\n",
        ),
        # The rule that makes sparc + clang a skip in a matrix (bug: kbuild built it).
        (
            ["-a", "sparc", "-t", "clang-16"],
            "E: nothing to build: clang-16 cannot build arch sparc (arch data: clang: false)\n",
        ),
    ],
)
def test_kbuild_bad_input_exits_1(kbuild, tmp_path, args, message):
    rc, out, err = kbuild(*args)
    assert rc == EXIT_INPUT
    assert out == ""
    assert err.startswith(message)
    assert not (tmp_path / "out").exists()


def test_kbuild_not_a_kernel_tree(kbuild, tmp_path):
    rc, out, err = kbuild(tree=tmp_path / "src")
    assert rc == EXIT_INPUT
    assert err == (
        f"E: tree: {str(tmp_path / 'src')!r} is not a kernel tree: missing Makefile, Kconfig, "
        "Kbuild (a tree has Makefile, Kconfig and Kbuild at its top)\n"
    )


def test_kbuild_without_make_is_an_infrastructure_error(kbuild, tmp_path, monkeypatch):
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    rc, out, err = kbuild("config")
    assert rc == EXIT_INFRA
    assert out.startswith("# to reproduce this build: kbuild --directory=")
    assert err == "E: GNU make (runtime local): 'make' not found on PATH; on Debian install: make\n"
    meta = json.loads((tmp_path / "out" / METADATA).read_text())
    assert meta["status"] == "ERROR"
    assert meta["targets"] == {}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-e", "NOEQUALS"], "argument -e/--environment: 'NOEQUALS' is not KEY=VALUE"),
        (
            ["-e", "=value"],
            "argument -e/--environment: '=value': '' is not a variable name (letters, digits, _)",
        ),
        (["-j", "many"], "argument -j/--jobs: 'many' is not a positive whole number"),
        # One rule for -j and --kbuild-jobs; make was given these (issue 16).
        (["-j", "-1"], "argument -j/--jobs: '-1' is not a positive whole number"),
        (["-j", "0"], "argument -j/--jobs: '0' is not a positive whole number"),
        (
            ["-j", "99999999999999999999"],
            "argument -j/--jobs: '99999999999999999999' is not a whole number from 1 to 1000000",
        ),
        (["--no-such-option"], "unrecognized arguments: --no-such-option"),
        # An empty value is a mistake, not the default (-a '' built this machine's arch).
        *(
            ([flag, ""], f"argument {flag}/{long}: empty value; leave the option out")
            for flag, long in [
                ("-a", "--target-arch"),
                ("-t", "--toolchain"),
                ("-k", "--kconfig"),
                ("-K", "--kconfig-add"),
                ("-w", "--wrapper"),
                ("-r", "--runtime"),
                ("-C", "--directory"),
                ("-o", "--output-dir"),
                ("-b", "--build-dir"),
            ]
        ),
        (["-i", " "], "argument -i/--image: empty value"),
    ],
)
def test_kbuild_usage_errors_exit_1(kbuild, capsys, tmp_path, args, message):
    with pytest.raises(SystemExit) as exc:
        kbuild(*args)
    assert exc.value.code == EXIT_INPUT
    err = capsys.readouterr().err
    assert f"kbuild: error: {message}" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_kbuild_rejects_make_variable_arch(kbuild, tmp_path, monkeypatch):
    # No tools on PATH: should ARCH= be accepted, nothing is built.
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    rc, out, err = kbuild("ARCH=arm64", "config")
    assert rc == EXIT_INPUT
    assert err.startswith("E: make variable ARCH cannot be set")


def test_kbuild_help(capsys):
    with pytest.raises(SystemExit) as exc:
        kbuild_main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "TARGET|KEY=VALUE" in out
    assert " ".join(kbuild_cli.default_targets()) in " ".join(out.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-j", "0"], "argument -j/--jobs: '0' is not a positive whole number"),
        (["-j", "-1"], "argument -j/--jobs: '-1' is not a positive whole number"),
        (["--timeout", "0"], "argument --timeout: '0' is not a positive number of seconds"),
        (
            ["--pull", "sometimes"],
            "argument --pull: pull 'sometimes' is not known; accepted: missing",
        ),
    ],
)
def test_kbuild_options_share_the_pytest_parsers(kbuild, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        kbuild(*args)
    assert exc.value.code == 1
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("kernel=x", "E: timeout of target kernel: 'x' is not a positive number of seconds"),
        (
            "kernl=5",
            "E: target_timeouts: unknown target 'kernl'; known: bindeb-pkg, binrpm-pkg, boot, ",
        ),
        ("kernel=-1", "E: timeout of target kernel: -1.0 is not a positive number of seconds"),
    ],
)
def test_kbuild_bad_target_timeout_is_bad_input(kbuild, value, message):
    rc, _, err = kbuild("--target-timeout", value, "config", "kernel")
    assert rc == EXIT_INPUT
    assert message in err


def test_kbuild_ctrl_c_is_130_and_marks_the_target(kbuild, tmp_path, monkeypatch):
    from fakes import FakeRuntime

    from pytest_kbuild import runtime

    fake = FakeRuntime(interrupt={"tinyconfig"})
    monkeypatch.setitem(runtime.RUNTIMES, "fake", lambda options: fake)
    rc, out, err = kbuild("-r", "fake", "-k", "tinyconfig", "config", "kernel")
    assert rc == EXIT_INTERRUPTED
    assert err == "E: interrupted; the running target is marked INTERRUPTED\n"
    meta = json.loads((tmp_path / "out" / METADATA).read_text())
    assert meta["targets"]["config"]["status"] == "INTERRUPTED"
    assert meta["targets"]["kernel"]["status"] == "SKIP"
    assert meta["status"] == "INTERRUPTED"


def test_kbuild_uses_a_given_build_dir_again(kbuild, tmp_path, monkeypatch):
    # TuxMake's second run with -b does not redo everything: the objects stay
    from fakes import FakeRuntime

    from pytest_kbuild import runtime

    monkeypatch.setitem(runtime.RUNTIMES, "fake", lambda options: FakeRuntime())
    assert kbuild("-r", "fake", "-k", "tinyconfig", "config")[0] == 0
    (tmp_path / "b" / "kernel.o").write_text("an object of the first run")
    assert kbuild("-r", "fake", "-k", "tinyconfig", "config")[0] == 0
    assert (tmp_path / "b" / "kernel.o").read_text() == "an object of the first run"


# -- --version and a closed pipe ------------------------------------------------------------


@pytest.mark.parametrize(("entry", "prog"), [(main, "pytest-kbuild"), (kbuild_main, "kbuild")])
def test_version(capsys, entry, prog):
    with pytest.raises(SystemExit) as exc:
        entry(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"{prog} {metadata.version('pytest-kbuild')}\n"


def test_list_into_a_closed_pipe_exits_quietly():
    # `pytest-kbuild list arch | head -1`, deterministic: the reader is gone
    # before the first write.
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest_kbuild.cli", "list", "arch"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert proc.stderr == ""
    assert proc.returncode == cli.EXIT_PIPE == 141


@pytest.mark.parametrize("make", [None, "empty"])
def test_diagnostics_of_a_missing_or_non_results_dir(capsys, tmp_path, make):
    path = tmp_path / "nope"
    if make:
        path.mkdir()
    assert main(["diagnostics", str(path)]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"E: {str(path)!r} ") and "accepted: a results dir" in err
    assert "Traceback" not in err
