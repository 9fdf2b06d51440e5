"""``pytest-kbuild``: list definitions, expand a matrix, merge shards'
results, print diagnostics, write the HTML report, SARIF and the KCIDB
document, the packages a matrix needs; images and bisect are in
subcommands.py. Thin: the work is in matrix/, report/ and hostpackages.py."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import definitions, matrix, parsers, runtime
from ..definitions import toolchain
from ..errors import KbuildError, NotAResultsDir
from ..report import codequality, github, grouping, kcidb, merge, sarif
from ..report import html as report
from ..results import METADATA, SUMMARY
from . import hostpackages, reportargs, subcommands
from .args import (
    EXIT_FAILED,
    EXIT_INFRA,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE,
    quiet_pipe,
    version,
)
from .kbuild import kbuild_main

__all__ = [
    "EXIT_FAILED",
    "EXIT_INFRA",
    "EXIT_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PIPE",
    "kbuild_main",
    "main",
]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pytest-kbuild", description="inspect definitions and matrices, merge results"
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="list arches, toolchains, targets, wrappers or runtimes")
    ls.add_argument("kind", choices=["arch", "toolchain", "target", "wrapper", "runtime"])
    ex = sub.add_parser("expand", help="print the builds a matrix expands to")
    ex.add_argument("matrix")
    ex.add_argument("--tree", help="kernel tree (default: the matrix's tree:)")
    ex.add_argument("--json", action="store_true", help="one JSON object per build")
    mg = sub.add_parser(
        "merge",
        help="merge the results dirs of several shards into OUT "
        "(build folders, results.json, DIR/*.xml into junit.xml)",
    )
    mg.add_argument("out", metavar="OUT")
    mg.add_argument("dirs", metavar="DIR", nargs="+")
    reportargs.add_parsers(sub)
    pk = sub.add_parser(
        "packages",
        help="the Debian packages the builds of matrices need where make runs "
        "(for apt-get install); with --pypi, what they need from PyPI instead "
        "(for pip install --no-deps; every target's without a MATRIX)",
    )
    pk.add_argument("--pypi", action="store_true", help="print the PyPI requirements")
    pk.add_argument("matrices", metavar="MATRIX", nargs="*")
    pk.set_defaults(parser=pk)
    subcommands.images_parser(sub)
    subcommands.bisect_parser(sub)
    return p


@quiet_pipe
def main(argv: Sequence[str] | None = None) -> int:
    """``pytest-kbuild list KIND`` / ``expand MATRIX`` / ``merge OUT DIR...`` /
    ``packages MATRIX...`` / ``diagnostics`` / ``report`` / ``summary`` / ``sarif`` /
    ``kcidb`` / ``images`` / ``bisect``."""
    opts = _parser().parse_args(argv)
    try:
        return _COMMANDS[opts.command](opts)
    except KbuildError as err:
        print(f"E: {err}", file=sys.stderr)
        return EXIT_INPUT


def _packages(opts: argparse.Namespace) -> int:
    if not opts.matrices and not opts.pypi:
        opts.parser.error("give at least one MATRIX (without one, only --pypi answers)")
    specs = [b for m in opts.matrices for b in matrix.load(m, None, check=False).builds]
    if opts.pypi:
        wanted = hostpackages.pypi_for_builds(specs) if specs else hostpackages.pypi_all()
    else:
        wanted = hostpackages.for_builds(specs)
    print(" ".join(wanted))
    return EXIT_OK


def _merge(opts: argparse.Namespace) -> int:
    done = merge.merge(Path(opts.out), [Path(d) for d in opts.dirs])
    junit = f", {done.testcases} testcases in {merge.JUNIT}" if done.testcases else ""
    print(f"I: merged {len(opts.dirs)} results dirs into {done.out}: {done.builds} builds{junit}")
    return EXIT_OK


def _report(opts: argparse.Namespace) -> int:
    try:
        out = report.write(Path(opts.results_dir), opts.output and Path(opts.output))
    except OSError as err:
        print(f"E: report {opts.output or opts.results_dir}: {err}", file=sys.stderr)
        return EXIT_INPUT
    print(f"I: HTML report of {opts.results_dir}: {out}")
    return EXIT_OK


def _summary(opts: argparse.Namespace) -> int:
    print(github.summary_of(Path(opts.results_dir)), end="")
    return EXIT_OK


def _sarif(opts: argparse.Namespace) -> int:
    results = Path(opts.results_dir)
    builds = grouping.read_builds(results)
    if not builds:  # results.json alone: the diagnostics are in the build folders
        raise NotAResultsDir(str(results), f"has a {SUMMARY} but no <matrix>/<build id>/{METADATA}")
    out = Path(opts.output) if opts.output else results / sarif.FILE
    where = Path(opts.workspace) if opts.workspace else sarif.workspace()
    groups = grouping.group(builds)
    absent = grouping.fixed(builds) if opts.absent else []
    try:
        sarif.write(out, groups, grouping.trees(builds), where, absent)
    except OSError as err:
        print(f"E: sarif {out}: {err.strerror or err}", file=sys.stderr)
        return EXIT_INPUT
    n = len(groups) + len(absent)
    print(f"I: SARIF of {opts.results_dir}: {out} ({n} result{'s' * (n != 1)})")
    return EXIT_OK


def _kcidb(opts: argparse.Namespace) -> int:
    origin = parsers.kcidb_origin(opts.origin, "--origin")
    base_url = opts.kcidb_base_url and parsers.kcidb_base_url(
        opts.kcidb_base_url, "--kcidb-base-url"
    )
    results_dir = Path(opts.results_dir)
    out = Path(opts.output or results_dir / kcidb.DOCUMENT)
    summary = kcidb.read_summary(results_dir)
    try:
        doc = kcidb.write(kcidb.Destination(out, origin, base_url), results_dir, summary)
    except OSError as err:
        print(f"E: -o {out}: {err.strerror or err}", file=sys.stderr)
        return EXIT_INPUT
    counts = ", ".join(
        f"{len(doc[k])} {k[:-1] if len(doc[k]) == 1 else k}"
        for k in ("checkouts", "builds", "tests")
    )
    print(f"I: KCIDB document of {opts.results_dir}: {out} ({counts})")
    return EXIT_OK


def _diagnostics(opts: argparse.Namespace) -> int:
    groups = grouping.summarise(Path(opts.results_dir))
    if opts.codequality:
        try:
            codequality.write(Path(opts.codequality), groups)
        except OSError as err:
            print(f"E: --codequality {opts.codequality}: {err.strerror}", file=sys.stderr)
            return EXIT_INPUT
    if opts.json:
        print(json.dumps({"schema": grouping.SCHEMA, "diagnostics": groups}, indent=2))
    else:
        for g in groups:
            print(grouping.line(g, width=10**6))
    return EXIT_OK


def _list(opts: argparse.Namespace) -> int:
    names = {
        "toolchain": toolchain.known,
        "runtime": runtime.available,
    }.get(opts.kind, lambda: definitions.available(opts.kind))()
    for name in names:
        print(name)
    return EXIT_OK


def _expand(opts: argparse.Namespace) -> int:
    m = matrix.load(opts.matrix, opts.tree, check=opts.tree is not None, tree_where="--tree")
    for b in m.builds:
        if opts.json:
            job = {"job": b.job, "unavailable": dict(b.unavailable)} if b.job else {}
            print(
                json.dumps(
                    {
                        "id": b.id,
                        "arch": b.arch,
                        "toolchain": b.toolchain,
                        "kconfig": b.kconfig,
                        "kconfig_add": list(b.kconfig_add),
                        "targets": list(b.targets),
                        "skip": b.skip_reason or None,
                        "left_out": dict(b.left_out),
                        **job,
                    }
                )
            )
        else:
            skip = f"  # skipped: {b.skip_reason}" if b.skip_reason else ""
            skip += "".join(f"  # left out: {why}" for _, why in b.left_out)
            skip += "".join(f"  # SKIP {t}: {why}" for t, why in b.unavailable)
            print(f"{b.id}: {' '.join(b.targets)}{skip}")
    return EXIT_OK


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "packages": _packages,
    "images": subcommands.images_command,
    "bisect": subcommands.bisect_command,
    "merge": _merge,
    "report": _report,
    "diagnostics": _diagnostics,
    "summary": _summary,
    "sarif": _sarif,
    "kcidb": _kcidb,
    "list": _list,
    "expand": _expand,
}
