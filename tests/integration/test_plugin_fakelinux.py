"""The whole plugin, driven through pytester, on a read-only fakelinux copy."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
import xml.etree.ElementTree as ET

import pytest

from tests.support import builds_by_id, path_without

ALL_X86 = """
arch: [x86_64]
toolchain: [gcc]
kconfig: [defconfig]
"""


def write_matrix(pytester, tree, body, name="m.yaml"):
    path = pytester.path / name
    path.write_text(f"tree: {tree}\n{body}")
    return path


def results_of(pytester, matrix="m"):
    summary = json.loads((pytester.path / "kbuild-results" / "results.json").read_text())
    return {
        bid: {t: v["outcome"] for t, v in b["targets"].items()}
        for bid, b in builds_by_id(summary).items()
    }


def test_node_ids_are_matrix_build_target(pytester, fakelinux):
    write_matrix(pytester, fakelinux, ALL_X86)
    result = pytester.runpytest("--kbuild-matrix=m.yaml", "--collect-only", "-q")
    ids = [ln for ln in result.outlines if "::" in ln]
    assert ids == [
        f"m.yaml::x86_64-gcc-defconfig::{t}"
        for t in ("config", "kernel", "debugkernel", "modules", "headers")
    ]  # dtbs and xipkernel can never apply to x86_64: not collected


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_full_build_outcomes_junit_and_results_tree(pytester, fakelinux, xdist):
    write_matrix(
        pytester, fakelinux, "arch: [x86_64, arm64]\ntoolchain: [gcc]\nkconfig: [defconfig]\n"
    )
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--junitxml=j.xml", "-o", "junit_family=xunit1", "-rs", *xdist
    )
    result.assert_outcomes(passed=11)  # no item for a target the arch never has
    assert results_of(pytester) == {
        "x86_64-gcc-defconfig": {
            "config": "passed",
            "kernel": "passed",
            "debugkernel": "passed",
            "modules": "passed",
            "headers": "passed",
        },
        "arm64-gcc-defconfig": {
            "config": "passed",
            "kernel": "passed",
            "debugkernel": "passed",
            "modules": "passed",
            "dtbs": "passed",
            "headers": "passed",
        },
    }
    out = pytester.path / "kbuild-results" / "m" / "x86_64-gcc-defconfig"
    for name in (
        "build.log",
        "metadata.json",
        "config",
        "bzImage",
        "vmlinux.xz",
        "System.map",
        "modules.tar.xz",
        "headers.tar.xz",
    ):
        assert (out / name).is_file(), name
    with tarfile.open(out / "modules.tar.xz") as tar:
        assert any(n.endswith(".ko") and n.startswith("lib/modules/") for n in tar.getnames())
    with tarfile.open(pytester.path / "kbuild-results/m/arm64-gcc-defconfig/dtbs.tar.xz") as tar:
        assert any(n.startswith("dtbs/") and n.endswith(".dtb") for n in tar.getnames())
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "PASS" and meta["toolchain"]["version"].startswith("gcc")
    assert meta["targets"]["kernel"]["status"] == "PASS"
    assert meta["artifacts"]["bzImage"]["sha256"]
    cases = ET.parse(pytester.path / "j.xml").getroot().findall(".//testcase")
    assert len(cases) == 11
    props = {p.get("name"): p.get("value") for p in cases[0].findall("properties/property")}
    assert props["arch"] in ("x86_64", "arm64") and props["toolchain"] == "gcc"
    assert props["reproducer"].startswith("kbuild --directory=")


def test_serial_and_xdist_results_are_equal(pytester, fakelinux):
    write_matrix(
        pytester,
        fakelinux,
        "arch: [x86_64, arm64, riscv]\ntoolchain: [gcc]\nkconfig: [defconfig, tinyconfig]\n",
    )
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    serial = results_of(pytester)
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-n", "2")
    assert results_of(pytester) == serial
    assert len(serial) == 6


def test_compiler_error_fails_kernel_with_first_error_and_reproducer(
    pytester, fakelinux, monkeypatch
):
    monkeypatch.setenv("FAIL", "kernel")
    write_matrix(pytester, fakelinux, ALL_X86 + "targets: [config, kernel, modules]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--junitxml=j.xml")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.re_match_lines(
        [r".*\.c:\d+:\d+: error: .*", r"log: .*build\.log", r"reproduce: kbuild .*"]
    )
    failure = (
        ET.parse(pytester.path / "j.xml").getroot().find(".//testcase[@name='kernel']/failure")
    )
    # The message is the first line (what Jenkins shows as the error), the
    # text all of it (what GitLab shows): the log and reproducer too.
    assert failure.get("message").startswith("x86_64-gcc-defconfig::kernel FAIL: ")
    assert ": error: " in failure.get("message") and "\n" not in failure.get("message")
    assert "build.log" in failure.text and "reproduce: kbuild " in failure.text


def test_failed_config_skips_dependents_naming_it(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("FAIL", "config")
    write_matrix(pytester, fakelinux, ALL_X86 + "targets: [config, kernel, headers]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-rs")
    result.assert_outcomes(failed=1, skipped=2)
    result.stdout.fnmatch_lines(["*dependency config did not pass*"])


def test_dropped_literal_option_fails_config(pytester, fakelinux):
    write_matrix(
        pytester,
        fakelinux,
        ALL_X86 + "targets: [config]\nkconfig_add: [CONFIG_MODULES=y, CONFIG_NO_SUCH_SYMBOL=y]\n",
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*CONFIG_NO_SUCH_SYMBOL=y was asked for, but the final .config is not set*"]
    )


def test_k_on_a_target_still_runs_its_dependency(pytester, fakelinux):
    write_matrix(pytester, fakelinux, ALL_X86)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-k", "x86_64 and modules")
    result.assert_outcomes(passed=1, deselected=4)
    meta = json.loads(
        (pytester.path / "kbuild-results/m/x86_64-gcc-defconfig/metadata.json").read_text()
    )
    assert meta["targets"]["config"]["status"] == "PASS"
    assert meta["targets"]["modules"]["status"] == "PASS"


def test_excluded_build_is_skipped_with_its_reason(pytester, fakelinux):
    write_matrix(
        pytester,
        fakelinux,
        "arch: [x86_64, arm64]\ntoolchain: [gcc]\ntargets: [config]\n"
        "exclude:\n  - {arch: arm64, reason: no arm64 boards in this lab}\n",
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*excluded by matrix.exclude[[]0[]]: no arm64 boards in this lab*"]
    )


def test_bad_matrix_is_a_collection_error_without_traceback(pytester, fakelinux):
    write_matrix(pytester, fakelinux, "arch: [x86_64, arm46]\ntoolchain: [gcc]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    assert result.ret == 2
    result.stdout.fnmatch_lines(
        ["*m.yaml:2: matrix.arch[[]1[]]: unknown arch 'arm46'; known: *arm64*"]
    )
    assert "Traceback" not in result.stdout.str()


BAD_MATRICES = {
    "unknown arch": ("arch: [x86_64, arm46]\ntoolchain: [gcc]\n", "*unknown arch 'arm46'*"),
    "bad yaml": ("arch: [x86_64\ntoolchain: [gcc]\n", "*invalid YAML*"),
    "unknown key": ("arch: [x86_64]\ntoolchain: [gcc]\ntargest: [kernel]\n", "*unknown key*"),
    "empty exclude": (
        "arch: [x86_64]\ntoolchain: [gcc]\nexclude: [{arch: arm64, reason: x}]\n",
        "*matches no build of the matrix*",
    ),
    "reserved variable": (
        "arch: [x86_64]\ntoolchain: [gcc]\nmake_variables: {O: /tmp}\n",
        "*make variable O cannot be set*",
    ),
}


@pytest.mark.parametrize("bad", sorted(BAD_MATRICES))
def test_a_bad_matrix_reads_the_same_with_and_without_xdist(pytester, fakelinux, bad):
    # Bug: with -n a bad matrix ended in INTERNALERROR and a traceback (exit 3).
    body, line = BAD_MATRICES[bad]
    write_matrix(pytester, fakelinux, body)
    outputs = []
    for xdist in ([], ["-n", "2"]):
        result = pytester.runpytest_subprocess(
            "--kbuild-matrix=m.yaml", "-p", "no:cacheprovider", *xdist
        )
        assert result.ret == 2, result.stdout.str()
        result.stdout.fnmatch_lines(
            ["*ERROR collecting m.yaml*", line, "*Interrupted: 1 error during collection*"]
        )
        text = result.stdout.str()
        assert "INTERNALERROR" not in text and "Traceback" not in text
        outputs.append([ln for ln in result.outlines if "m.yaml" in ln])
    assert outputs[0] == outputs[1]


def test_directory_that_is_not_a_kernel_tree(pytester):
    (pytester.path / "empty").mkdir()
    write_matrix(pytester, "empty", "arch: [x86_64]\ntoolchain: [gcc]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*is not a kernel tree: missing Makefile, Kconfig, Kbuild*"])


def test_missing_matrix_file_is_a_usage_error(pytester):
    result = pytester.runpytest_subprocess("--kbuild-matrix=nope.yaml")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--kbuild-matrix: matrix file *nope.yaml* does not exist*"])


def test_missing_toolchain_is_an_error_naming_the_package(pytester, fakelinux):
    write_matrix(pytester, fakelinux, "arch: [x86_64]\ntoolchain: [gcc-8]\ntargets: [config]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*toolchain gcc-8 for x86_64*'gcc-8' not found on PATH; on Debian install: gcc-8*"]
    )
    assert "During handling of the above exception" not in result.stdout.str()
    assert (pytester.path / "kbuild-results/m/x86_64-gcc-8-defconfig/metadata.json").is_file()


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_missing_rsync_is_an_error_of_headers_not_a_failure(
    pytester, fakelinux, monkeypatch, tmp_path, xdist
):
    monkeypatch.setenv("PATH", str(path_without(tmp_path, "rsync")))
    write_matrix(pytester, fakelinux, ALL_X86 + "targets: [config, kernel, headers]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--junitxml=j.xml", *xdist)
    result.assert_outcomes(passed=2, errors=1)
    message = "target headers (runtime local): 'rsync' not found on PATH; on Debian install: rsync"
    result.stdout.fnmatch_lines([f"*x86_64-gcc-defconfig::headers ERROR: {message}"])
    # Said once (no chained exception), besides the short summary line (which
    # pytest does not truncate when CI is set).
    said = [ln for ln in result.outlines if message in ln and not ln.startswith("ERROR ")]
    assert len(said) == 1, result.stdout.str()
    assert results_of(pytester) == {
        "x86_64-gcc-defconfig": {"config": "passed", "kernel": "passed", "headers": "error"}
    }
    root = ET.parse(pytester.path / "j.xml").getroot()
    case = root.find(".//testcase[@name='headers']")
    assert case.find("failure") is None
    assert message in case.find("error").get("message")
    out = pytester.path / "kbuild-results/m/x86_64-gcc-defconfig"
    assert f"E: {message}" in (out / "build.log").read_text()
    assert "headers_install" not in (out / "build.log").read_text()  # make never ran for it
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["targets"]["headers"]["status"] == "ERROR"
    assert meta["targets"]["kernel"]["status"] == "PASS"
    assert not (out / "headers.tar.xz").exists()


def test_headers_install_of_fakelinux_runs_rsync(pytester, fakelinux, tmp_path, monkeypatch):
    # The check above is what turns a missing rsync into an error: without
    # it, make itself fails, as Linux 6.1's does.
    bindir = path_without(tmp_path, "rsync")
    build = tmp_path / "o"
    proc = subprocess.run(
        ["make", "-C", str(fakelinux), f"O={build}", "headers_install"],
        env={**os.environ, "PATH": str(bindir)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0 and "rsync" in proc.stderr, proc.stderr
    proc = subprocess.run(
        ["make", "-C", str(fakelinux), f"O={build}", "headers_install"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (build / "usr/include/linux/version.h").is_file()


def test_warnings_pass_and_are_counted(pytester, fakelinux, monkeypatch):
    monkeypatch.setenv("WARN", "kernel")
    monkeypatch.setenv("COLUMNS", "200")  # summary lines are cut to the terminal's width
    write_matrix(pytester, fakelinux, ALL_X86 + "targets: [config, kernel]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-codequality=cq.json")
    result.assert_outcomes(passed=2)
    meta = json.loads(
        (pytester.path / "kbuild-results/m/x86_64-gcc-defconfig/metadata.json").read_text()
    )
    assert meta["targets"]["kernel"]["warnings"] >= 1
    # the same warning for GitLab's merge request widget, at its file in the tree
    report = json.loads((pytester.path / "cq.json").read_text())
    warned_cq = [e for e in report if e["severity"] == "minor"]
    assert warned_cq and not warned_cq[0]["location"]["path"].startswith("/"), report
    assert (fakelinux / warned_cq[0]["location"]["path"]).is_file(), report
    # gcc's real warning, grouped over the run and shown once in the summary
    groups = json.loads((pytester.path / "kbuild-results/diagnostics.json").read_text())
    warned = [g for g in groups["diagnostics"] if g["kind"] == "warning"]
    assert warned and warned[0]["builds"] == ["x86_64-gcc-defconfig"], groups
    assert warned[0]["targets"] == ["kernel"]
    result.stdout.fnmatch_lines(["*- kbuild diagnostics (*", "*warning: * - 1 build: x86_64-*"])


def test_fakelinux_images_match_the_arch_data():
    """fakelinux stands in for the real tree only if it puts images where the
    arch files say (mips: the arch file builds plain vmlinux, which fakelinux has)."""
    import re

    from pytest_kbuild import definitions
    from pytest_kbuild.definitions.arch import Arch
    from tests.support import FAKELINUX

    for name in definitions.available("arch"):
        arch = Arch.load(name)
        text = (FAKELINUX / "arch" / arch.srcarch / "Makefile").read_text()
        image = re.search(r"^KBUILD_IMAGE\s*:=\s*(\S+)", text, re.M).group(1)
        has_dts = re.search(r"^dtbs\s*:=", text, re.M) is not None
        if arch.kernel_image != "vmlinux":
            assert image == arch.kernel_image_path, name
        assert has_dts == arch.dtbs, name


def test_kconfig_sources_in_tree_path_local_file_fragment_target_and_make(pytester, fakelinux):
    (pytester.path / "local.config").write_text("CONFIG_LOG_BUF_SHIFT=16\n")
    write_matrix(
        pytester,
        fakelinux,
        "arch: x86_64\ntoolchain: gcc\nkconfig: arch/x86/configs/x86_64_defconfig\ntargets: [config, modules]\n"
        "kconfig_add: [fake_modules.config, local.config, 'make:debug.config', '# CONFIG_FAKE_DRIVER2 is not set']\n",
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml")
    result.assert_outcomes(passed=2)
    out = pytester.path / "kbuild-results/m/x86_64-gcc-x86_64_defconfig"
    config = (out / "config").read_text()
    assert "CONFIG_FAKE_DRIVER=m" in config and "CONFIG_LOG_BUF_SHIFT=16" in config
    assert "CONFIG_FAKE_DRIVER2=m" not in config
    meta = json.loads((out / "metadata.json").read_text())
    assert [s["kind"] for s in meta["kconfig_sources"]] == [
        "in-tree file",
        "make target",
        "file",
        "make target",
        "literal",
    ]
    log = (out / "build.log").read_text()
    assert (
        "make --silent --keep-going" in log
        and " fake_modules.config" in log
        and " debug.config" in log
    )
    assert "merge_config.sh -m -O" in log and log.rstrip().count("olddefconfig") >= 1


def test_git_tree_is_described_in_metadata(pytester, tmp_path):
    import shutil
    import subprocess

    from tests.support import FAKELINUX

    tree = tmp_path / "gittree"
    shutil.copytree(FAKELINUX, tree)
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "v6.1"], check=True)
    subprocess.run(
        [*git, "tag", "-a", "-m", "v6.1-fake", "v6.1-fake"], check=True
    )  # kernel tags are annotated
    write_matrix(pytester, tree, "arch: x86_64\ntoolchain: gcc\ntargets: [config]\n")
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml").assert_outcomes(passed=1)
    meta = json.loads(
        (pytester.path / "kbuild-results/m/x86_64-gcc-defconfig/metadata.json").read_text()
    )
    assert meta["tree"]["kernelversion"] == "6.1.0"
    assert meta["tree"]["git"]["describe"] == "v6.1-fake"
    assert len(meta["tree"]["git"]["commit"]) == 40


def test_minus_k_with_a_build_id_selects_one_combination(pytester, fakelinux):
    write_matrix(
        pytester, fakelinux, "arch: [x86_64, arm64]\ntoolchain: [gcc]\ntargets: [config, kernel]\n"
    )
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "-k", "arm64-gcc", "--collect-only", "-q"
    )
    assert [ln for ln in result.outlines if "::" in ln] == [
        "m.yaml::arm64-gcc-defconfig::config",
        "m.yaml::arm64-gcc-defconfig::kernel",
    ]


def test_xdist_starts_the_longest_remembered_build_first(pytester, fakelinux):
    write_matrix(
        pytester, fakelinux, "arch: [x86_64, arm64, riscv]\ntoolchain: [gcc]\ntargets: [config]\n"
    )
    # A first run remembers durations in pytest's cache...
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-n", "1").assert_outcomes(passed=3)
    cache = json.loads((pytester.path / ".pytest_cache/v/kbuild/durations").read_text())
    assert set(cache) == {f"m.yaml::{a}-gcc-defconfig" for a in ("x86_64", "arm64", "riscv")}
    # ...which the scheduler uses: make riscv the longest, then x86_64.
    cache.update({"m.yaml::riscv-gcc-defconfig": 500.0, "m.yaml::x86_64-gcc-defconfig": 300.0})
    (pytester.path / ".pytest_cache/v/kbuild/durations").write_text(json.dumps(cache))
    pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "-n", "1", "--junitxml=j.xml"
    ).assert_outcomes(passed=3)
    order = [
        c.get("classname") for c in ET.parse(pytester.path / "j.xml").getroot().iter("testcase")
    ]
    assert order == [
        "m.riscv-gcc-defconfig",
        "m.x86_64-gcc-defconfig",
        "m.arm64-gcc-defconfig",
    ]


@pytest.mark.parametrize(
    ("args", "shared"),
    [((), True), (("--kbuild-jobs=1",), False), (("--kbuild-jobserver=off",), False)],
)
def test_n_auto_workers_follow_the_cpu_budget(pytester, fakelinux, args, shared):
    import os

    from pytest_kbuild.run.scheduling import auto_workers, physical_memory

    write_matrix(pytester, fakelinux, "arch: [x86_64]\ntoolchain: [gcc]\ntargets: [config]\n")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "-n", "auto", *args)
    workers = auto_workers(os.cpu_count() or 1, physical_memory(), shared_budget=shared)
    result.stdout.fnmatch_lines([f"created: {workers}/{workers} worker*"])
    result.assert_outcomes(passed=1)
    header = [ln for ln in result.outlines if ln.startswith("kbuild jobserver:")]
    assert bool(header) == (shared and workers > 1)


# -- sharding across machines -------------------------------------------------------------

SIX_BUILDS = (
    "arch: [x86_64, arm64, riscv]\ntoolchain: [gcc]\nkconfig: [defconfig, tinyconfig]\n"
    "targets: [config, kernel]\n"
)


def collected_builds(result):
    return {ln.split("::")[1] for ln in result.outlines if ln.count("::") == 2}


def test_three_shards_build_what_one_run_builds(pytester, fakelinux):
    from pytest_kbuild.cli.commands import main as kbuild_cli

    write_matrix(pytester, fakelinux, SIX_BUILDS)
    pytester.runpytest_subprocess("--kbuild-matrix=m.yaml").assert_outcomes(passed=12)
    whole = results_of(pytester)
    assert len(whole) == 6
    shards = {}
    for i in (1, 2, 3):
        xdist = ["-n", "2"] if i == 2 else []  # workers deselect; the controller prints
        result = pytester.runpytest_subprocess(
            "--kbuild-matrix=m.yaml",
            f"--kbuild-shard={i}/3",
            f"--kbuild-results=shard-{i}",
            f"--junitxml=shard-{i}/junit.xml",
            *xdist,
        )
        result.stdout.fnmatch_lines([f"kbuild shard {i}/3: 2 of 6 builds (est. *)"])
        result.assert_outcomes(passed=4)
        summary = json.loads((pytester.path / f"shard-{i}" / "results.json").read_text())
        shards[i] = {
            bid: {t: v["outcome"] for t, v in b["targets"].items()}
            for bid, b in builds_by_id(summary).items()
        }
    # Every build in exactly one shard, with the outcomes of the whole run.
    assert sum(len(s) for s in shards.values()) == 6
    assert {bid: t for s in shards.values() for bid, t in s.items()} == whole
    # Defconfig builds weigh most: one per shard, then one tinyconfig each.
    for s in shards.values():
        assert sorted(b.rsplit("-", 1)[1] for b in s) == ["defconfig", "tinyconfig"]
    # The merged results equal those of the unsharded run.
    dirs = [str(pytester.path / f"shard-{i}") for i in (1, 2, 3)]
    assert kbuild_cli(["merge", str(pytester.path / "merged"), *dirs]) == 0
    merged = json.loads((pytester.path / "merged" / "results.json").read_text())
    assert {
        bid: {t: v["outcome"] for t, v in b["targets"].items()}
        for bid, b in builds_by_id(merged).items()
    } == whole
    assert merged["totals"] == {"builds": 6, "passed": 12}
    assert sorted(p.name for p in (pytester.path / "merged" / "m").iterdir()) == sorted(whole)
    cases = ET.parse(pytester.path / "merged" / "junit.xml").getroot()
    assert cases.get("tests") == "12" and len(cases.findall(".//testcase")) == 12


def test_k_does_not_move_a_build_to_another_shard(pytester, fakelinux):
    write_matrix(pytester, fakelinux, SIX_BUILDS)
    args = ["--kbuild-matrix=m.yaml", "--kbuild-shard=1/3", "--collect-only", "-q"]
    mine = collected_builds(pytester.runpytest_subprocess(*args))
    assert len(mine) == 2
    tiny = collected_builds(pytester.runpytest_subprocess(*args, "-k", "tinyconfig"))
    assert tiny == {b for b in mine if b.endswith("tinyconfig")} and len(tiny) == 1


def test_durations_file_moves_the_split(pytester, fakelinux):
    write_matrix(pytester, fakelinux, SIX_BUILDS)
    (pytester.path / "d.json").write_text(json.dumps({"m.yaml::x86_64-gcc-tinyconfig": 5000}))
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml",
        "--kbuild-shard=1/3",
        "--kbuild-durations=d.json",
        "--collect-only",
        "-q",
    )
    # The longest build alone outweighs the others of shard 2 or 3: it is shard 1, alone.
    assert collected_builds(result) == {"x86_64-gcc-tinyconfig"}
    result.stdout.fnmatch_lines(["kbuild shard 1/3: 1 of 6 builds (est. 1h23m)"])


def test_shard_from_gitlab_variables(pytester, fakelinux, monkeypatch):
    write_matrix(pytester, fakelinux, SIX_BUILDS)
    monkeypatch.setenv("CI_NODE_INDEX", "3")
    monkeypatch.setenv("CI_NODE_TOTAL", "3")
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["kbuild shard 3/3: 2 of 6 builds (est. *)"])
    assert len(collected_builds(result)) == 2
    # An explicit shard wins over the CI's.
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--kbuild-shard=1/1", "--collect-only", "-q"
    )
    assert len(collected_builds(result)) == 6


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--kbuild-shard=4/3"], {}, "*--kbuild-shard: '4/3' has index 4 outside 1..3*"),
        ([], {"JOB_COMPLETION_INDEX": "1"}, "*JOB_COMPLETION_INDEX: '1' is set*"),
        (["--kbuild-durations=nope.json"], {}, "*--kbuild-durations: *nope.json*cannot be read*"),
    ],
)
def test_bad_shard_settings_are_usage_errors(pytester, fakelinux, monkeypatch, args, env, message):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    write_matrix(pytester, fakelinux, SIX_BUILDS)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", *args)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


def test_ci_variables_without_a_matrix_change_nothing(pytester, monkeypatch):
    monkeypatch.setenv("JOB_COMPLETION_INDEX", "1")
    pytester.makepyfile("def test_x(): pass")
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


def test_a_shard_without_builds_passes(pytester, fakelinux):
    write_matrix(
        pytester, fakelinux, "arch: [x86_64, arm64]\ntoolchain: [gcc]\ntargets: [config]\n"
    )
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-shard=3/3")
    result.stdout.fnmatch_lines(["kbuild shard 3/3: 0 of 2 builds (est. 0s)"])
    assert result.ret == 0
    # -k selecting nothing is still pytest's "no tests ran".
    result = pytester.runpytest_subprocess(
        "--kbuild-matrix=m.yaml", "--kbuild-shard=1/3", "-k", "nothing-matches"
    )
    assert result.ret == 5


SLOW = """
arch: [x86_64, arm64]
toolchain: [gcc]
targets: [config, kernel]
env: {FAKELINUX_SLEEP: "4"}
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_progress_lines_while_building(pytester, fakelinux, xdist):
    """Every --kbuild-progress seconds, one line per running build: its target,
    elapsed time and the command make runs (fakelinux's kernel sleeps)."""
    write_matrix(pytester, fakelinux, SLOW)
    result = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-progress=1", *xdist)
    result.assert_outcomes(passed=4)
    worker = "[[]gw?[]] " if xdist else ""
    for arch in ("x86_64", "arm64"):
        result.stdout.fnmatch_lines([f"kbuild: {worker}{arch}-gcc-defconfig kernel *s: sleep 4"])
    assert not (pytester.path / "kbuild-results" / ".progress").exists()
    quiet = pytester.runpytest_subprocess("--kbuild-matrix=m.yaml", "--kbuild-progress=1", "-q")
    quiet.assert_outcomes(passed=4)
    assert "kbuild: " not in quiet.stdout.str().replace("kbuild: 2 builds", "")
