#!/usr/bin/env python3
"""Wall time of pytest-kbuild vs TuxMake (runtime null), same builds, side by side.

Each round builds the same tree, arches, toolchain, kconfig and targets with
the same ``make -j`` through pytest-kbuild and through
``tuxmake --runtime=null``, each side first in turn, each in fresh build and
output directories, and prints wall and CPU seconds (RUSAGE_CHILDREN) and
the ratios to TuxMake. The median wall ratio is the figure (issue 4,
benchmark 5; goal <= 0.90). The sides (``--sides``):

- ``kbuild``: the ``kbuild`` CLI, one build after another;
- ``tuxmake``: ``tuxmake``, one build after another (the yardstick);
- ``pytest``: one ``pytest --kbuild-matrix`` run of all the builds, with
  ``-n auto`` when there are several (the plugin's defaults: its workers
  and one jobserver for all builds);
- ``tuxmake-parallel``: the ``tuxmake`` commands ``--parallel`` at a time,
  each with the same ``-j`` (what a user can do by hand: TuxMake builds one
  kernel per run and has no budget shared between runs).

One arch (``--arch``) compares a single build, ``kbuild`` and ``tuxmake``
by default; several (``--arches``) compare a matrix, ``pytest``,
``tuxmake`` and ``tuxmake-parallel`` by default.

    python benchmarks/tuxmake.py [--tree /usr/src/linux-source-6.1] [--runs 3]
        [--tuxmake PATH | --venv DIR] [--sides S ...] [--parallel 2] [--dry-run]
        [--arch x86_64 | --arches x86_64 arm64 ...]
        [--toolchain gcc --kconfig tinyconfig --targets config kernel]

TuxMake is installed with ``pip install tuxmake`` into a private virtualenv
(``--venv``, default: a temporary one) unless ``--tuxmake`` names an
existing executable.

Both sides run without a compiler cache: kbuild gets ``--wrapper=none``,
TuxMake ``--wrapper=none``, PATH loses any ccache directory and both get
CCACHE_DISABLE=1. PYTEST_KBUILD_*, TUXMAKE_*, CC, HOSTCC, CROSS_COMPILE,
ARCH and MAKEFLAGS are removed from their environment. TuxMake gets
``--runtime=null`` (no container, no image pull); with a named kconfig and
no fragment URLs it downloads nothing.

What TuxMake (1.45) does that kbuild does not, read from its source; the
figure includes all of it, as a user comparing the two tools would see:

- ``kernel`` depends on TuxMake's ``default`` target, so it runs a plain
  ``make`` (``all``: vmlinux and, on x86, bzImage; modules if
  CONFIG_MODULES) and then ``make bzImage``. kbuild's ``kernel`` runs
  ``make bzImage`` only. With tinyconfig the compiled objects are the same;
  TuxMake pays one extra, nearly empty make pass over the tree.
- ``config`` is ``make tinyconfig`` for both (no fragments, so neither
  runs olddefconfig or merge_config.sh).
- Its x86_64 definition always sets CROSS_COMPILE=x86_64-linux-gnu-, while
  kbuild uses plain ``gcc`` on an x86_64 host. On Debian both names lead to
  the same compiler binary (the script prints where each resolves).
- It sets KCFLAGS=-ffile-prefix-map=<build dir>/= and
  KBUILD_BUILD_TIMESTAMP/USER/HOST for reproducible builds.
- Every command's output goes through Python line by line into build.log
  and build-debug.log (with timestamps), and the console.
- Metadata: before the build a perl script runs about 50 probes (compiler
  ``--version`` and ``-dumpversion``, ~30 tools' ``--version``, git,
  uname, nproc, /etc/os-release); after it, ``make kernelrelease``,
  ``make kernelversion``, ``du -sm`` of the build dir, ``size vmlinux`` and
  System.map; then a regex pass over build.log for errors and warnings.
- Every command runs under tuxmake-run-offline (``unshare --net``) when
  socat is installed and unshare works; otherwise it warns once and runs
  them as they are (the script says which happened).
- It copies the artifacts (.config, bzImage) to the output dir and writes
  metadata.json and reproducer.sh; kbuild copies its artifacts and writes
  metadata.json too. Neither removes a build dir given on the command line.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

if __package__:  # imported as benchmarks.<name> (the tests)
    from .measure import timed
else:  # run as python benchmarks/<name>.py
    from measure import timed

# The kbuild console script, run by this interpreter so that PYTHONPATH
# picks which pytest_kbuild is measured.
KBUILD = [
    sys.executable,
    "-c",
    "import sys; from pytest_kbuild.cli import kbuild_main; sys.exit(kbuild_main())",
]
DROPPED_ENV = ("CC", "HOSTCC", "CROSS_COMPILE", "ARCH", "MAKEFLAGS", "MFLAGS", "KCFLAGS")
DROPPED_PREFIXES = ("PYTEST_KBUILD_", "TUXMAKE_", "CCACHE_", "SCCACHE_")
NO_OFFLINE = "Support for running offline not available"


def build_env() -> dict[str, str]:
    """This environment without compiler caches or settings of either tool."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in DROPPED_ENV and not k.startswith(DROPPED_PREFIXES)
    }
    path = env.get("PATH", os.defpath).split(os.pathsep)
    env["PATH"] = os.pathsep.join(p for p in path if "ccache" not in p)
    env["CCACHE_DISABLE"] = "1"
    return env


def install_tuxmake(venv_dir: Path, dry_run: bool) -> Path:
    """tuxmake from `pip install tuxmake` in *venv_dir* (created if missing)."""
    exe = venv_dir / "bin" / "tuxmake"
    pip = [str(venv_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", "tuxmake"]
    if exe.exists():
        return exe
    if dry_run:
        print(f"would run: {sys.executable} -m venv {venv_dir}")
        print(f"would run: {shlex.join(pip)}")
        return exe
    print(f"installing tuxmake into {venv_dir} ...", flush=True)
    venv.create(venv_dir, with_pip=True)
    proc = subprocess.run(pip, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not exe.exists():
        sys.exit(f"pip install tuxmake failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return exe


SIDES = ("kbuild", "tuxmake", "pytest", "tuxmake-parallel")


def kbuild_argv(opts: argparse.Namespace, arch: str, build: Path, out: Path) -> list[str]:
    return [
        *KBUILD,
        f"--directory={opts.tree}",
        f"--target-arch={arch}",
        f"--toolchain={opts.toolchain}",
        f"--kconfig={opts.kconfig}",
        "--wrapper=none",
        "--runtime=local",
        f"--jobs={opts.jobs}",
        f"--build-dir={build}",
        f"--output-dir={out}",
        *opts.targets,
    ]


def tuxmake_argv(
    opts: argparse.Namespace, exe: Path, arch: str, build: Path, out: Path
) -> list[str]:
    return [
        str(exe),
        "--runtime=null",
        f"--directory={opts.tree}",
        f"--target-arch={arch}",
        f"--toolchain={opts.toolchain}",
        f"--kconfig={opts.kconfig}",
        "--wrapper=none",
        f"--jobs={opts.jobs}",
        f"--build-dir={build}",
        f"--output-dir={out}",
        *opts.targets,
    ]


def pytest_argv(opts: argparse.Namespace, matrix: Path, build: Path, out: Path) -> list[str]:
    """One pytest run of the whole matrix with the plugin's defaults: ``-n
    auto`` (workers and a shared jobserver) for several builds, else the
    same ``-j`` as the other sides."""
    several = len(opts.arches) > 1
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        f"--kbuild-matrix={matrix}",
        f"--kbuild-build-dir={build}",
        f"--kbuild-results={out}",
        *(["-n", "auto"] if several else [f"--kbuild-jobs={opts.jobs}"]),
    ]


def side_commands(
    name: str, opts: argparse.Namespace, exe: Path, matrix: Path, work: Path, i: int
) -> list[tuple[str, list[str]]]:
    """(log name, argv) of every command side *name* runs in round *i*."""
    build, out = work / f"{name}-build-{i}", work / f"{name}-out-{i}"
    for parent in (build, out):  # TuxMake makes only the last level
        parent.mkdir(parents=True, exist_ok=True)
    if name == "pytest":
        return [(f"{name}-{i}", pytest_argv(opts, matrix, build, out))]
    return [
        (
            f"{name}-{i}-{arch}",
            kbuild_argv(opts, arch, build / arch, out / arch)
            if name == "kbuild"
            else tuxmake_argv(opts, exe, arch, build / arch, out / arch),
        )
        for arch in opts.arches
    ]


def run_logged(
    commands: list[tuple[str, list[str]]], at_once: int, cwd: Path, env: dict[str, str]
) -> None:
    """Run *commands*, *at_once* at a time, each with its output in
    ``cwd/<log name>.log``; exit with a log's tail if one fails."""
    waiting = list(commands)
    running: list[tuple[subprocess.Popen[bytes], list[str], Path]] = []
    while waiting or running:
        while waiting and len(running) < at_once:
            name, argv = waiting.pop(0)
            log = cwd / f"{name}.log"
            with log.open("wb") as f:
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT)
            running.append((proc, argv, log))
        time.sleep(0.1)
        for proc, argv, log in [r for r in running if r[0].poll() is not None]:
            running.remove((proc, argv, log))
            if proc.returncode != 0:
                tail = log.read_text(errors="replace")[-3000:]
                sys.exit(f"{shlex.join(argv)}\nexited {proc.returncode}; end of {log}:\n{tail}")


def make_lines(log: Path, prefix: str) -> list[str]:
    """The make command lines a tool wrote to its build.log (from ``make``
    on: pytest-kbuild's jobserver wrapper runs make under ``sh -c``)."""
    lines = log.read_text(errors="replace").splitlines()
    found = []
    for ln in lines:
        if ln.startswith(prefix):
            at = ln.find("make ", len(prefix))
            if at == len(prefix) or (prefix and at > 0 and ln[at - 1] == " "):
                found.append(ln[at:])
    return found


def compiler_of(command: str, toolchain: str) -> str:
    """The C compiler name a make command line selects (gcc toolchains)."""
    words = dict(w.split("=", 1) for w in shlex.split(command) if "=" in w)
    return words.get("CC") or f"{words.get('CROSS_COMPILE', '')}{toolchain}"


def describe_first_round(work: Path, ours: str, toolchain: str) -> None:
    """Print the make commands of the first build of each side and where
    their compilers lead."""
    our_log = sorted((work / f"{ours}-out-0").rglob("build.log"))[0]
    tm_log = sorted((work / "tuxmake-out-0").rglob("build.log"))[0]
    kb, tm = make_lines(our_log, "$ "), make_lines(tm_log, "")
    print(f"make commands run by {ours} ({our_log.parent.name}):")
    for c in kb:
        print(f"  {c}")
    print(f"make commands run by tuxmake ({tm_log.parent.name}; its metadata probes not shown):")
    for c in tm:
        print(f"  {c}")
    for name, cmds in ((ours, kb), ("tuxmake", tm)):
        if cmds:
            cc = compiler_of(cmds[-1], toolchain)
            where = shutil.which(cc)
            print(f"{name} compiler: {cc} -> {os.path.realpath(where) if where else 'not found'}")
    why = [
        ln.strip()
        for log in sorted(work.glob("tuxmake-0*.log"))
        for ln in log.read_text(errors="replace").splitlines()
        if NO_OFFLINE in ln
    ]
    offline = f"no: {why[0]}" if why else "yes"
    print(f"tuxmake ran its commands offline (unshare --net): {offline}")


def check_artifacts(out: Path, name: str, builds: int) -> None:
    images = {p.parent for p in out.rglob("*Image*")} | {p.parent for p in out.rglob("vmlinux*")}
    if len(images) < builds:
        sys.exit(f"{name}: {len(images)} of {builds} builds left a kernel image under {out}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--tree", default="/usr/src/linux-source-6.1")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--arch", default="x86_64", help="one build of this arch")
    p.add_argument("--arches", nargs="+", help="a matrix: one build per arch")
    p.add_argument("--toolchain", default="gcc")
    p.add_argument("--kconfig", default="tinyconfig")
    p.add_argument("--targets", nargs="+", default=["config", "kernel"])
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--sides", nargs="+", choices=SIDES, help="what to time (see above)")
    p.add_argument("--parallel", type=int, default=2, help="tuxmake-parallel: builds at once")
    p.add_argument("--tuxmake", help="an existing tuxmake executable (no install)")
    p.add_argument("--venv", help="virtualenv for tuxmake (default: a temporary one)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, build nothing")
    opts = p.parse_args(argv)
    opts.tree = Path(opts.tree).resolve()
    opts.arches = opts.arches or [opts.arch]
    several = len(opts.arches) > 1
    default_sides = ["pytest", "tuxmake", "tuxmake-parallel"] if several else ["kbuild", "tuxmake"]
    names = list(dict.fromkeys(["tuxmake", *(opts.sides or default_sides)]))
    ours = next((n for n in names if n in ("pytest", "kbuild")), None)
    at_once = {n: opts.parallel if n == "tuxmake-parallel" else 1 for n in names}
    env = build_env()
    with tempfile.TemporaryDirectory(prefix="kbuild-bench-tuxmake-") as tmp:
        work = Path(tmp)
        if opts.tuxmake:
            exe = Path(opts.tuxmake).resolve()
            if not os.access(exe, os.X_OK):
                sys.exit(f"--tuxmake {opts.tuxmake}: not an executable file")
        else:
            venv_dir = Path(opts.venv).resolve() if opts.venv else work / "tuxmake-venv"
            exe = install_tuxmake(venv_dir, opts.dry_run)
        matrix = work / "bench.yaml"
        matrix.write_text(
            f"arch: [{', '.join(opts.arches)}]\ntoolchain: [{opts.toolchain}]\n"
            f"kconfig: [{opts.kconfig}]\ntargets: [{', '.join(opts.targets)}]\n"
            f"wrapper: none\ntree: {opts.tree}\n"
        )
        version = "(not installed)"
        if exe.exists():
            version = subprocess.run(
                [str(exe), "--version"], capture_output=True, text=True, check=False
            ).stdout.strip()
            version = version.splitlines()[0] if version else "(no --version)"
        print(
            f"machine: {os.cpu_count()} cores; make -j{opts.jobs}; {version}; tree {opts.tree}; "
            f"{len(opts.arches)} build(s): {' '.join(opts.arches)} {opts.toolchain} "
            f"{opts.kconfig} {' '.join(opts.targets)}"
        )
        if opts.dry_run:
            print(
                f"environment: PATH without ccache dirs, CCACHE_DISABLE=1, dropped "
                f"{', '.join(DROPPED_ENV)} and {'*, '.join(DROPPED_PREFIXES)}*"
            )
            for name in names:
                for _, argv in side_commands(name, opts, exe, matrix, work, 0):
                    print(f"{name} ({at_once[name]} at a time): {shlex.join(argv)}")
            if "pytest" in names:
                print(f"pytest matrix {matrix.name}:\n{matrix.read_text()}", end="")
            return
        wall: dict[str, list[float]] = {n: [] for n in names}
        cpu: dict[str, list[float]] = {n: [] for n in names}
        for i in range(opts.runs):
            # Rotate the order so that each side goes first in turn.
            order = names[i % len(names) :] + names[: i % len(names)]
            for name in order:
                commands = side_commands(name, opts, exe, matrix, work, i)

                def run(commands: list[tuple[str, list[str]]] = commands, n: str = name) -> None:
                    run_logged(commands, at_once[n], work, env)

                w, c = timed(run)
                wall[name].append(w)
                cpu[name].append(c)
                check_artifacts(work / f"{name}-out-{i}", name, len(opts.arches))
            if i == 0 and ours:
                describe_first_round(work, ours, opts.toolchain)
            # Emptying the build dirs is not part of any measurement.
            for name in names:
                shutil.rmtree(work / f"{name}-build-{i}", ignore_errors=True)
            cols = "  ".join(f"{n} {wall[n][i]:7.1f} s ({cpu[n][i]:6.1f} CPU s)" for n in names)
            ratios = "  ".join(
                f"{n}/tuxmake {wall[n][i] / wall['tuxmake'][i]:.3f} "
                f"(CPU {cpu[n][i] / cpu['tuxmake'][i]:.3f})"
                for n in names
                if n != "tuxmake"
            )
            print(f"run {i + 1} ({' then '.join(order)}): {cols}  {ratios}", flush=True)
        cores = os.cpu_count() or 1
        for n in names:
            if n == "tuxmake":
                continue
            # A side that spent its own CPU seconds on perfectly packed cores
            # would take CPU / cores: no schedule of the same work does better.
            floor = statistics.median(
                c / cores / t for c, t in zip(cpu[n], wall["tuxmake"], strict=True)
            )
            print(f"floor for {n}/tuxmake (its CPU s / {cores} cores / tuxmake wall): {floor:.3f}")
            w_ratio = statistics.median(
                a / b for a, b in zip(wall[n], wall["tuxmake"], strict=True)
            )
            c_ratio = statistics.median(a / b for a, b in zip(cpu[n], cpu["tuxmake"], strict=True))
            print(
                f"median {n}/tuxmake over {opts.runs} runs on {os.cpu_count()} cores: "
                f"wall {w_ratio:.3f} (goal <= 0.90), CPU {c_ratio:.3f}"
            )


if __name__ == "__main__":
    main()
