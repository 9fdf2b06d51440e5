"""The plugin on Debian's real linux-source-6.1 tree with real toolchains.

One pytest run of matrices/smoke.yaml (-n 2) is shared by the checks below;
it is the same command as the README's main job.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support import ROOT, XUNIT2_XSD, builds_by_id, require_tools, run_pytest

SMOKE = ROOT / "matrices" / "smoke.yaml"


@pytest.fixture(scope="module")
def smoke(linux_tree, tmp_path_factory):
    require_tools(
        "gcc", "aarch64-linux-gnu-gcc", "riscv64-linux-gnu-gcc", "clang-16", "ld.lld-16", "file"
    )
    work = tmp_path_factory.mktemp("smoke")
    proc = run_pytest(
        work,
        f"--kbuild-matrix={SMOKE}",
        f"--kbuild-tree={linux_tree}",
        "-n",
        "2",
        "--kbuild-results=results",
        # kept for test_a_second_run_in_the_same_build_dir_compiles_nothing
        f"--kbuild-build-dir={work / 'objects'}",
        "--junitxml=results/junit.xml",
        "-rs",
    )
    print(proc.stdout[-6000:])
    return work / "results", proc


def build_dir(results: Path, build_id: str) -> Path:
    return results / "smoke" / build_id


def test_every_target_has_the_expected_outcome(smoke):
    results, proc = smoke
    summary = json.loads((results / "results.json").read_text())
    outcomes = {
        bid: {t: v["outcome"] for t, v in b["targets"].items()}
        for bid, b in builds_by_id(summary).items()
    }
    assert outcomes == {
        "x86_64-gcc-tinyconfig": {
            "config": "passed",
            "kernel": "passed",
            "debugkernel": "passed",
            "modules": "skipped",
        },
        "riscv-gcc-tinyconfig": {
            "config": "passed",
            "kernel": "passed",
            "debugkernel": "passed",
            "modules": "skipped",
        },
        "arm64-clang-16-tinyconfig-modules": {
            "config": "passed",
            "kernel": "passed",
            "debugkernel": "passed",
            "modules": "passed",
            "dtbs": "passed",
            "headers": "passed",
        },
    }, proc.stdout[-4000:]
    assert proc.returncode == 0
    x86 = builds_by_id(summary)["x86_64-gcc-tinyconfig"]["targets"]["modules"]
    assert "CONFIG_MODULES=y" in x86["reason"]
    # -n 2 on the shared jobserver: each target's wait for a slot apart from
    # the time it ran (shown with -rP: the figures of issue 31's note)
    for bid, build in summary["builds"].items():
        for name, t in build["targets"].items():
            assert t["queued"] >= 0 and t["duration"] >= 0, (bid, name, t)
            print(f"{bid} {name}: ran {t['duration']:.1f} s, waited {t['queued']:.1f} s")


def file_type(path: Path) -> str:
    return subprocess.run(
        ["file", "-b", "-z", str(path)], capture_output=True, text=True, check=True
    ).stdout


def test_progress_says_what_make_builds(smoke):
    """The README's main job (-n 2, the default 30 s) prints what each running
    build is doing; a real kernel build takes long enough to show it."""
    _, proc = smoke
    doing = re.findall(
        r"^kbuild: \[gw\d\] (\S+) (\S+) \S+: (CC|LD|AR|AS|CPP) (\S+)$", proc.stdout, re.M
    )
    assert doing, proc.stdout[-3000:]
    assert all(not path.startswith("/") for *_, path in doing), doing


@pytest.mark.parametrize(
    ("build_id", "image", "expected"),
    [
        ("x86_64-gcc-tinyconfig", "bzImage", "Linux kernel x86 boot executable bzImage"),
        ("x86_64-gcc-tinyconfig", "vmlinux.xz", "ELF 64-bit LSB executable, x86-64"),
        ("riscv-gcc-tinyconfig", "vmlinux.xz", "ELF 64-bit LSB executable, UCB RISC-V"),
        ("arm64-clang-16-tinyconfig-modules", "vmlinux.xz", "ARM aarch64"),
        (
            "arm64-clang-16-tinyconfig-modules",
            "Image.gz",
            "Linux kernel ARM64 boot executable Image",
        ),
    ],
)
def test_images_are_for_the_right_architecture(smoke, build_id, image, expected):
    results, _ = smoke
    assert expected in file_type(build_dir(results, build_id) / image)


def test_modules_tarball_holds_a_real_module(smoke):
    results, _ = smoke
    with tarfile.open(
        build_dir(results, "arm64-clang-16-tinyconfig-modules") / "modules.tar.xz"
    ) as tar:
        kos = [n for n in tar.getnames() if n.endswith(".ko")]
        assert any(n.endswith("crc-ccitt.ko") for n in kos), kos
        assert all(n.startswith("lib/modules/") for n in kos)
        data = tar.extractfile(next(n for n in kos if n.endswith("crc-ccitt.ko"))).read()
    assert data[:4] == b"\x7fELF" and data[18:20] == (183).to_bytes(2, "little")  # EM_AARCH64


def test_dtbs_and_headers_tarballs(smoke):
    results, _ = smoke
    out = build_dir(results, "arm64-clang-16-tinyconfig-modules")
    with tarfile.open(out / "dtbs.tar.xz") as tar:
        names = tar.getnames()
    assert any(n.startswith("dtbs/") and n.endswith(".dtb") for n in names), names[:20]
    with tarfile.open(out / "headers.tar.xz") as tar:
        assert any(n.endswith("include/linux/types.h") for n in tar.getnames())


def test_metadata_records_toolchain_options_and_artifacts(smoke):
    results, _ = smoke
    meta = json.loads(
        (build_dir(results, "arm64-clang-16-tinyconfig-modules") / "metadata.json").read_text()
    )
    assert meta["status"] == "PASS"
    assert "clang version 16" in meta["toolchain"]["version"]
    assert meta["makevars"]["LLVM"] == "-16" and meta["makevars"]["ARCH"] == "arm64"
    assert meta["tree"]["kernelversion"].startswith("6.1.")
    assert set(meta["artifacts"]) >= {
        "config",
        "Image.gz",
        "modules.tar.xz",
        "dtbs.tar.xz",
        "headers.tar.xz",
    }
    for art in meta["artifacts"].values():
        assert len(art["sha256"]) == 64 and art["size"] > 0
    config = (build_dir(results, "arm64-clang-16-tinyconfig-modules") / "config").read_text()
    assert "CONFIG_CRC_CCITT=m" in config and "CONFIG_MODULES=y" in config
    assert (
        meta["reproducer"].startswith("kbuild ")
        and "--kconfig-add=CONFIG_CRC_CCITT=m" in meta["reproducer"]
    )
    # the build record (issue 14): what was built, with what, where
    assert meta["kernelrelease"].startswith("6.1.")
    assert "clang version 16" in meta["tools"]["compiler"]
    assert "LLD" in meta["tools"]["ld"] and "GNU Make" in meta["tools"]["make"]
    assert meta["tools"]["rsync"].startswith("rsync") and meta["tools"]["depmod"]
    assert meta["vmlinux"]["text"] > 100_000 and meta["vmlinux"]["bss"] > 0
    assert re.fullmatch(r"0xffff[0-9a-f]{12}", meta["vmlinux"]["text_offset"])
    assert [m for m in meta["modules"] if m.endswith("crc-ccitt")], meta["modules"]
    assert meta["totals"]["errors"] == 0 and meta["hardware"]["cores"] >= 1
    log = (build_dir(results, "arm64-clang-16-tinyconfig-modules") / "build.log").read_text()
    assert log.startswith("# to reproduce this build: kbuild ")
    assert log.splitlines()[1] == f"# compiler: {meta['toolchain']['version']}"
    x86 = json.loads((build_dir(results, "x86_64-gcc-tinyconfig") / "metadata.json").read_text())
    assert x86["tools"]["ld"].startswith("GNU ld") and x86["vmlinux"]["text"] > 100_000
    assert x86["vmlinux"]["text_offset"] == "0xffffffff81000000" and x86["modules"] is None


def test_x86_64_objtool_builds_within_the_shared_jobserver(smoke):
    """The smoke run (-n 2) shares one jobserver. x86_64 builds objtool in a
    tools/ sub-make that keeps only MAKEFLAGS' -j words: it must build as a
    client of that jobserver, not leave it (make's "-j0 forced in makefile:
    resetting jobserver mode" for unlimited jobs, or "jobserver unavailable:
    using -j1")."""
    results, _ = smoke
    out = build_dir(results, "x86_64-gcc-tinyconfig")
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["jobserver"]["slots"] >= 2 and meta["jobs"] is None, meta["jobserver"]
    objects = results.parent / "objects" / "smoke" / "x86_64-gcc-tinyconfig"
    assert (objects / "tools" / "objtool" / "objtool").is_file()
    log = (out / "build.log").read_text()
    left = [
        ln
        for ln in log.splitlines()
        if re.search(r"forced in (makefile|submake)|jobserver unavailable", ln)
    ]
    assert left == [], left


def test_junit_is_xunit2_with_attachments(smoke):
    """The README's main job (pytest's default family, xunit2) writes what
    Jenkins' xUnit plugin accepts; every case links its log."""
    import xmlschema

    results, _ = smoke
    xmlschema.XMLSchema(XUNIT2_XSD).validate(results / "junit.xml")
    root = ET.parse(results / "junit.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 14
    suite = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert suite["kbuild_matrices"].endswith("smoke.yaml")
    for case in cases:
        if case.find("skipped") is None:
            assert "build.log]]" in case.find("system-out").text


def test_the_kcidb_document_of_the_smoke_run_is_valid(smoke, tmp_path):
    """pytest-kbuild kcidb on the smoke run's results dir (no new build): a
    document kcidb-io's latest schema accepts, with the real compilers."""
    from kcidb_io.schema import LATEST

    results, _ = smoke
    out = tmp_path / "kcidb.json"
    base = "https://ci.example.org/jobs/1/results"
    argv = ["kcidb", str(results), "--origin", "pytest_kbuild", "--kcidb-base-url", base]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_kbuild.cli", *argv, "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    print(done.stdout, done.stderr)  # shown with -s or -rP
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    LATEST.validate(doc)
    builds = {b["misc"]["build_id"]: b for b in doc["builds"]}
    print(json.dumps(builds["arm64-clang-16-tinyconfig-modules"], indent=2))
    assert {i: (b["status"], b["architecture"]) for i, b in builds.items()} == {
        "x86_64-gcc-tinyconfig": ("PASS", "x86_64"),
        "riscv-gcc-tinyconfig": ("PASS", "riscv"),
        "arm64-clang-16-tinyconfig-modules": ("PASS", "arm64"),
    }
    arm64 = builds["arm64-clang-16-tinyconfig-modules"]
    assert "clang version 16" in arm64["compiler"]
    assert arm64["config_url"] == f"{base}/smoke/arm64-clang-16-tinyconfig-modules/config"
    names = {f["name"] for f in arm64["output_files"]}
    assert {"Image.gz", "modules.tar.xz", "dtbs.tar.xz", "metadata.json"} <= names
    assert all(b["duration"] > 1 for b in builds.values())  # real compiles
    assert [c["id"] for c in doc["checkouts"]] == list({b["checkout_id"] for b in builds.values()})


def test_dropped_option_fails_config_on_the_real_tree(linux_tree, tmp_path):
    (tmp_path / "m.yaml").write_text(
        "arch: x86_64\ntoolchain: gcc\nkconfig: tinyconfig\ntargets: [config, kernel]\n"
        "kconfig_add: [CONFIG_MODULES=y, CONFIG_KASAN=y]\n"
    )
    proc = run_pytest(tmp_path, "--kbuild-matrix=m.yaml", f"--kbuild-tree={linux_tree}", "-rs")
    assert proc.returncode == 1, proc.stdout
    # KASAN needs dependencies tinyconfig lacks: Kconfig drops it silently.
    assert "CONFIG_KASAN=y was asked for, but the final .config is not set" in proc.stdout
    assert "dependency config did not pass" in proc.stdout
    # the config that failed its check is kept: it shows what Kconfig made
    out = tmp_path / "kbuild-results/m/x86_64-gcc-tinyconfig"
    config = (out / "config").read_text()
    assert "CONFIG_MODULES=y" in config and "CONFIG_KASAN=y" not in config


def test_compiler_error_is_reported_with_log_and_reproducer(linux_tree, tmp_path):
    (tmp_path / "m.yaml").write_text(
        "arch: x86_64\ntoolchain: gcc\nkconfig: tinyconfig\ntargets: [config, kernel]\n"
        "make_variables: {KCFLAGS: -fno-such-option-kbuild}\n"
    )
    proc = run_pytest(
        tmp_path, "--kbuild-matrix=m.yaml", f"--kbuild-tree={linux_tree}", "--junitxml=j.xml"
    )
    assert proc.returncode == 1, proc.stdout
    # gcc quotes with ' or with typographic quotes, depending on the locale
    assert re.search(
        r"gcc: error: unrecognized command-line option .-fno-such-option-kbuild.", proc.stdout
    )
    assert "reproduce: kbuild " in proc.stdout and "KCFLAGS=-fno-such-option-kbuild" in proc.stdout
    failure = ET.parse(tmp_path / "j.xml").getroot().find(".//testcase[@name='kernel']/failure")
    assert "unrecognized command-line option" in failure.get("message")
    assert "build.log" in failure.text  # the message is the first line, the text all of it


def test_a_change_that_adds_a_warning_is_new_against_the_smoke_run(smoke, linux_tree, tmp_path):
    """The smoke run is the baseline; the change is one line in kernel/fork.c
    of a hard-linked copy of the tree (another path: keys are tree-relative)."""
    results, _ = smoke
    tree = tmp_path / "linux"
    # hard links where /tmp and the tree share a file system, else a copy
    if subprocess.run(["cp", "-al", str(linux_tree), str(tree)], check=False).returncode:
        subprocess.run(["rm", "-rf", str(tree)], check=True)
        subprocess.run(["cp", "-a", str(linux_tree), str(tree)], check=True)
    fork = tree / "kernel" / "fork.c"
    text = fork.read_text()
    fork.unlink()  # a new file, not the hard-linked original
    fork.write_text(text + "\nstatic int kbuild_new_warning;\n")
    (tmp_path / "m.yaml").write_text(
        "arch: x86_64\ntoolchain: gcc\nkconfig: tinyconfig\ntargets: [config, kernel]\n"
    )
    proc = run_pytest(
        tmp_path,
        "--kbuild-matrix=m.yaml",
        f"--kbuild-tree={tree}",
        f"--kbuild-baseline={results}",
        "--kbuild-fail-on=new-warnings",
    )
    print(proc.stdout[-4000:])
    assert proc.returncode == 1, proc.stdout[-3000:]
    out = proc.stdout
    assert "x86_64-gcc-tinyconfig::kernel FAIL: 1 new warning (fail-on new-warnings)" in out
    assert re.search(
        r"  >> .*kernel/fork\.c:\d+:\d+: warning: .kbuild_new_warning. defined but not used \[-Wunused-variable\]",
        out,
    )
    assert "baseline: 1 new warning, 0 new errors, 0 fixed" in out
    meta = json.loads(
        (tmp_path / "kbuild-results/m/x86_64-gcc-tinyconfig/metadata.json").read_text()
    )
    kernel = meta["targets"]["kernel"]
    assert (kernel["baseline"]["new_warnings"], kernel["failed_on"]) == (1, "new-warnings")
    assert "bzImage" in kernel["artifacts"]


def test_arm64_gcc_enables_the_compat_vdso(linux_tree, tmp_path):
    """With gcc, Kconfig offers COMPAT_VDSO only when CROSS_COMPILE_COMPAT is
    set (arch/arm64/Kconfig): the config step alone shows it is (a whole
    build, which compiles arch/arm64/kernel/vdso32/, is in the closing note)."""
    require_tools("aarch64-linux-gnu-gcc", "arm-linux-gnueabihf-gcc")
    proc = subprocess.run(
        [sys.executable, "-c", "from pytest_kbuild.cli import kbuild_main; exit(kbuild_main())"]
        + [f"-C{linux_tree}", "-a", "arm64", "-t", "gcc", "-k", "tinyconfig"]
        + ["-K", "CONFIG_COMPAT=y", "-K", "CONFIG_COMPAT_VDSO=y", "-o", str(tmp_path), "config"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CONFIG_COMPAT_VDSO=y" in (tmp_path / "config").read_text()
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["makevars"]["CROSS_COMPILE_COMPAT"] == "arm-linux-gnueabihf-"


REPRODUCED = ("Image.gz", "vmlinux.xz", "modules.tar.xz", "dtbs.tar.xz", "headers.tar.xz")


def test_the_fresh_machine_builds_the_same_bytes_as_the_smoke_run(
    smoke, fresh_machine, record_property
):
    """Reproducible by default, with the local runtime: the smoke run's arm64
    modules build (config, kernel, debugkernel, modules, dtbs, headers) and
    the fresh machine's build of the same spec give the same bytes. The
    fresh machine is another machine: a container whose Debian packages
    .ci/setup installed, another checkout, another build dir and results dir,
    nothing set by hand (Linux 6.1's modules_install needs modules.builtin,
    which only vmlinux's objects make, so no smaller build gives a
    modules.tar.xz)."""
    results, _ = smoke
    assert fresh_machine.returncode == 0, fresh_machine.where()
    build_id = "arm64-clang-16-tinyconfig-modules"
    first = json.loads((build_dir(results, build_id) / "metadata.json").read_text())
    again = json.loads((fresh_machine.results / "smoke" / build_id / "metadata.json").read_text())
    assert first["build_dir"] != again["build_dir"]
    assert first["toolchain"]["version"] == again["toolchain"]["version"]
    assert first["reproducible"]["enabled"] is True
    assert first["reproducible"]["epoch"] == again["reproducible"]["epoch"]
    stamp = first["reproducible"]["variables"]["KBUILD_BUILD_TIMESTAMP"]
    assert again["reproducible"]["variables"]["KBUILD_BUILD_TIMESTAMP"] == stamp
    pairs = {
        n: (first["artifacts"][n]["sha256"], again["artifacts"][n]["sha256"]) for n in REPRODUCED
    }
    for name, (one, two) in pairs.items():
        record_property(f"{name}_sha256", f"{one} {two}")
        print(f"{name}: smoke run {one}, fresh machine {two}")
    assert all(one == two for one, two in pairs.values()), pairs


def test_a_second_run_in_the_same_build_dir_compiles_nothing(smoke, linux_tree, record_property):
    """--kbuild-build-dir given again is incremental: the smoke run's x86_64
    build again in its build dir (objects/smoke/<build id>, kept) compiles
    nothing (no "CC" line with make's commands shown) and gives the same
    bzImage. 37 s on a loaded 2-core machine."""
    results, _ = smoke
    work = results.parent
    build_id = "x86_64-gcc-tinyconfig"
    objects = work / "objects" / "smoke" / build_id
    assert (objects / "vmlinux").is_file(), "the smoke run's objects were not kept"
    proc = run_pytest(
        work,
        f"--kbuild-matrix={SMOKE}",
        f"--kbuild-tree={linux_tree}",
        "-k",
        "x86_64",
        "--kbuild-results=again-incremental",
        f"--kbuild-build-dir={work / 'objects'}",
        "--kbuild-jobs=2",
        "--kbuild-verbose",
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    out = work / "again-incremental" / "smoke" / build_id
    log = (out / "build.log").read_text()
    compiled = re.findall(r"^  CC +(\S+)", log, re.M)
    record_property("incremental_cc_lines", len(compiled))
    assert " O=" in log and "  GEN     Makefile" in log  # make ran, verbosely
    assert compiled == [], compiled[:20]
    first = json.loads((build_dir(results, build_id) / "metadata.json").read_text())
    again = json.loads((out / "metadata.json").read_text())
    assert again["build_dir"] == first["build_dir"] == str(objects)
    assert again["artifacts"]["bzImage"]["sha256"] == first["artifacts"]["bzImage"]["sha256"]
