#!/usr/bin/env python3
"""Mutation testing (mutmut) of one module at a time against its own unit
tests only: how many deliberate small bugs the tests notice.

Each module runs in a scratch copy of the work tree (the tracked and new
files), with a ``[mutmut]`` section that mutates the module's file (FILES)
and selects ``tests/unit/test_MODULE.py`` (the diagnostics parser keeps its
tests in test_diagnostics.py and test_logscan.py), so a run never touches
the work tree and never starts the slow integration tests. Too slow for CI
(minutes per module on two cores); run it by hand after changing a module:

    pip install -e '.[dev]'
    python benchmarks/mutation.py matrix kconfig kconfigfetch shard diagnostics [--jobs 1]

(at niceness 10 unless ``--nice N``).

It prints one line per module: mutants generated, killed, survived,
timeout (and the other mutmut outcomes when there are any), then the
surviving mutants' names; ``--keep`` leaves the scratch copies behind so
``mutmut show NAME`` can be run in them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module -> its file under pytest_kbuild/
FILES: dict[str, str] = {
    "matrix": "matrix/matrixfile.py",
    "kconfig": "kconfig/__init__.py",
    "kconfigfetch": "kconfig/remote.py",
    "shard": "run/shard.py",
    "diagnostics": "diagnostics/__init__.py",
}
# module -> the unit tests that exercise it (and nothing slower)
TESTS: dict[str, list[str]] = {
    "matrix": ["tests/unit/test_matrix.py"],
    "kconfig": ["tests/unit/test_kconfig.py"],
    "kconfigfetch": ["tests/unit/test_kconfigfetch.py", "tests/unit/test_kconfig.py"],
    "shard": ["tests/unit/test_shard.py"],
    "diagnostics": ["tests/unit/test_diagnostics.py", "tests/unit/test_logscan.py"],
}


def scratch_copy(dest: Path) -> None:
    """The work tree's tracked and new (not ignored) files, under *dest*."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listing.split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def setup_cfg(module: str) -> str:
    tests = "\n    ".join(TESTS[module])
    return (
        "[mutmut]\n"
        "source_paths = pytest_kbuild/\n"
        f"only_mutate = pytest_kbuild/{FILES[module]}\n"
        f"pytest_add_cli_args_test_selection =\n    {tests}\n"
        "pytest_add_cli_args =\n    -p no:cacheprovider\n"
        "use_git_change_detection = false\n"
    )


def run_module(module: str, jobs: int, keep: bool) -> dict[str, object]:
    work = Path(tempfile.mkdtemp(prefix=f"kbuild-mutmut-{module}-"))
    try:
        scratch_copy(work)
        (work / "setup.cfg").write_text(setup_cfg(module))
        mutmut = [sys.executable, "-m", "mutmut"]
        started = time.monotonic()
        run = subprocess.run(
            [*mutmut, "run", "--max-children", str(jobs)],
            cwd=work,
            capture_output=True,
            text=True,
        )
        took = time.monotonic() - started
        if run.returncode != 0:
            sys.stderr.write(run.stdout[-3000:] + run.stderr[-3000:])
        subprocess.run([*mutmut, "export-cicd-stats"], cwd=work, check=True, capture_output=True)
        stats = json.loads((work / "mutants" / "mutmut-cicd-stats.json").read_text())
        results = subprocess.run(
            [*mutmut, "results"], cwd=work, capture_output=True, text=True
        ).stdout
        stats["survivors"] = [
            line.split(":")[0].strip() for line in results.splitlines() if "survived" in line
        ]
        stats["seconds"] = round(took)
        stats["dir"] = str(work)
        return stats
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("modules", nargs="*", default=list(TESTS), choices=list(TESTS))
    p.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default 1)")
    p.add_argument("--keep", action="store_true", help="keep the scratch copies")
    p.add_argument(
        "--nice", type=int, default=10, help="niceness added to this run and its mutants (10)"
    )
    args = p.parse_args(argv)
    os.nice(args.nice)  # minutes of CPU on every core: let other work go first
    for module in args.modules:
        s = run_module(module, args.jobs, args.keep)
        others = {k: s[k] for k in ("no_tests", "suspicious", "skipped", "segfault") if s.get(k)}
        print(
            f"{module}: {s['total']} mutants, {s['killed']} killed, {s['survived']} survived,"
            f" {s['timeout']} timeout{'' if not others else ', ' + str(others)}"
            f" ({s['seconds']} s{', kept in ' + str(s['dir']) if args.keep else ''})",
            flush=True,
        )
        for name in s["survivors"]:  # type: ignore[attr-defined]
            print(f"  survived: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
