#!/usr/bin/env python3
"""What the installed plugin adds to the start of every pytest run, in a
project that has no matrix at all.

A scratch project (one file with one trivial test) is run with the plugin
("plugin") and with ``-p no:kbuild`` ("no plugin"), interleaved, each side
first in turn; a third side runs ``-p no:kbuild`` once more ("no plugin
again"): its ratio to "no plugin" is what this machine's noise alone
gives, the yardstick for the plugin's ratio. Each side's median wall time
and the ratio of the medians are the figures (goal <= 1.05). CPU seconds of
each run are printed too: they vary less than wall time on a shared VM.

    python benchmarks/startup.py [--runs 15] [--python /path/to/venv/bin/python]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__:  # imported as benchmarks.<name> (the tests)
    from .measure import timed
else:  # run as python benchmarks/<name>.py
    from measure import timed

SIDES = ("plugin", "no plugin", "no plugin again")
DISTRIBUTION = "pytest-kbuild"
# How pytest -VV lists a loaded plugin: "  pytest-kbuild-0.1.0 at <path>".
REGISTERED = re.compile(rf"^\s+{DISTRIBUTION}-\S+ at ", re.M)
TRIVIAL_TEST = "def test_nothing():\n    assert True\n"


def side_args(name: str) -> list[str]:
    """pytest's arguments for one side: the same run, with or without the plugin."""
    # No cache: a run must not leave state that makes the next one faster.
    args = ["-q", "-p", "no:cacheprovider"]
    return args if name == "plugin" else [*args, "-p", "no:kbuild"]


def scratch_project(top: Path) -> Path:
    """A project with one trivial test and its own ini file, so that no
    conftest.py or ini file from the directories above it is read."""
    project = top / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_trivial.py").write_text(TRIVIAL_TEST)
    return project


def clean_environ() -> dict[str, str]:
    """This environment without what would change pytest's start: extra
    options and any pytest-kbuild setting (a matrix would load everything)."""
    return {
        k: v
        for k, v in os.environ.items()
        if k != "PYTEST_ADDOPTS" and not k.startswith("PYTEST_KBUILD_")
    }


def pytest_run(python: str, project: Path, args: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run(
        [python, "-m", "pytest", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"pytest {' '.join(args)} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.stdout + proc.stderr


def check_sides(python: str, project: Path, env: dict[str, str]) -> str:
    """Fail unless the plugin is loaded on the plugin side only (else the
    ratio would compare two identical runs); return pytest's version line."""
    with_plugin = pytest_run(python, project, ["-VV"], env)
    without = pytest_run(python, project, ["-VV", "-p", "no:kbuild"], env)
    if not REGISTERED.search(with_plugin):
        sys.exit(f"{DISTRIBUTION} is not loaded by {python} -m pytest:\n{with_plugin}")
    if REGISTERED.search(without):
        sys.exit(f"-p no:kbuild did not block {DISTRIBUTION}:\n{without}")
    # "This is pytest version 9.2.0, imported from <path>": the version only.
    return with_plugin.strip().splitlines()[0].split(",")[0]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--runs", type=int, default=15)
    p.add_argument(
        "--python", default=sys.executable, help="the interpreter whose pytest and plugin to time"
    )
    opts = p.parse_args(argv)
    env = clean_environ()
    with tempfile.TemporaryDirectory(prefix="kbuild-startup-") as tmp:
        project = scratch_project(Path(tmp))
        # Also the warm-up: the first runs read the files from disk.
        version = check_sides(opts.python, project, env)
        print(f"machine: {os.cpu_count()} cores; {version}; one trivial test, no matrix")
        wall: dict[str, list[float]] = {n: [] for n in SIDES}
        cpu: dict[str, list[float]] = {n: [] for n in SIDES}
        for i in range(opts.runs):
            order = SIDES[i % len(SIDES) :] + SIDES[: i % len(SIDES)]
            for name in order:
                w, c = timed(
                    lambda name=name: pytest_run(opts.python, project, side_args(name), env)
                )
                wall[name].append(w)
                cpu[name].append(c)
            cols = "  ".join(f"{n} {wall[n][i]:.3f} s ({cpu[n][i]:.3f} CPU s)" for n in SIDES)
            print(f"run {i + 1} ({' then '.join(order)}): {cols}", flush=True)
        med = {n: statistics.median(wall[n]) for n in SIDES}
        med_cpu = {n: statistics.median(cpu[n]) for n in SIDES}
        print(
            f"median over {opts.runs} runs: "
            + ", ".join(f"{n} {med[n]:.3f} s ({med_cpu[n]:.3f} CPU s)" for n in SIDES)
        )
        for name in ("plugin", "no plugin again"):
            print(
                f"median {name}/no plugin over {opts.runs} runs: "
                f"wall {med[name] / med['no plugin']:.3f}, "
                f"CPU {med_cpu[name] / med_cpu['no plugin']:.3f}"
                + (" (goal <= 1.05)" if name == "plugin" else " (the noise floor)")
            )


if __name__ == "__main__":
    main()
