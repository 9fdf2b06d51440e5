#!/usr/bin/env python3
"""Error and warning counts of TuxMake's log-parser tests, side by side with
pytest-kbuild's diagnostics on the same real logs (issue 12).

TuxMake's source distribution ships real build logs (``test/logs/*.log``)
and the counts its ``LogParser`` must find (``test/test_log_parser.py``).
This script takes that sdist (``pip download --no-binary :all:``, or a file
or unpacked directory given with ``--sdist``), runs TuxMake's own parser
and ours on every log, and prints per log: the counts TuxMake's test
expects, what its parser counts here, our counts (``diagnostics.summary``:
distinct records, make's ``***`` lines only when nothing else failed), our
records and occurrences, and our first error. Nothing of TuxMake is kept.

The two count different things, which is why the figures differ where they
do: TuxMake counts *lines* that contain ``error:``/``warning:`` or one of
seven phrases, case-insensitively; we count *diagnostics*: a line a tool
printed in one of the forms it prints, the same one repeated (a header
included by many objects) counted once with an occurrence count, dtc's
``Warning (check):`` and ld's errors without ``error:`` included.

    python benchmarks/tuxmake_logs.py [--version 1.45.0 | --sdist PATH]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from pytest_kbuild import diagnostics


def unpack(sdist: Path, into: Path) -> Path:
    """The unpacked source tree of *sdist* (a .tar.gz or a directory)."""
    if sdist.is_dir():
        return sdist
    with tarfile.open(sdist) as tar:
        tar.extractall(into, filter="data")
    (top,) = [p for p in into.iterdir() if p.is_dir()]
    return top


def download(version: str, into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        + ["-d", str(into), f"tuxmake=={version}"],
        check=True,
    )
    return next(into.glob("tuxmake-*.tar.gz"))


def expected(source: Path) -> list[tuple[str, int, int]]:
    """(log, errors, warnings) from the parametrize table of TuxMake's test."""
    tree = ast.parse((source / "test" / "test_log_parser.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and node.elts and isinstance(node.elts[0], ast.Tuple):
            rows = [ast.literal_eval(e) for e in node.elts]
            if all(len(r) == 3 and str(r[0]).endswith(".log") for r in rows):
                return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]
    raise SystemExit(f"no (log, errors, warnings) table in {source}/test/test_log_parser.py")


def tuxmake_parser(source: Path) -> Any:
    """TuxMake's LogParser class, loaded from *source* alone."""
    spec = importlib.util.spec_from_file_location("tuxmake_log", source / "tuxmake" / "log.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LogParser


def compare(source: Path) -> list[dict[str, Any]]:
    parser_class = tuxmake_parser(source)
    rows = []
    for name, errors, warnings in expected(source):
        path = source / "test" / "logs" / name
        theirs = parser_class()
        theirs.parse(path)
        diags = diagnostics.parse(path.read_bytes().decode(errors="replace"))
        ours = diagnostics.summary(diags)
        first = diagnostics.first_errors(diags, limit=1)
        rows.append(
            {
                "log": name,
                "expected": (errors, warnings),
                "tuxmake": (theirs.errors, theirs.warnings),
                "ours": (ours["errors"], ours["warnings"]),
                "records": len(diags),
                "occurrences": sum(d.count for d in diags),
                "tools": sorted({d.tool.value for d in diags}),
                "first": first[0].headline if first else "",
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="1.45.0", help="TuxMake version to download")
    ap.add_argument("--sdist", type=Path, help="a TuxMake sdist (.tar.gz) or unpacked tree")
    opts = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tuxmake-logs-") as tmp:
        sdist = opts.sdist or download(opts.version, Path(tmp))
        source = unpack(sdist, Path(tmp) / "src")
        rows = compare(source)
    print(f"TuxMake log tests from {sdist.name}: errors/warnings")
    print(
        f"{'log':<32} {'test':>6} {'tuxmake':>8} {'kbuild':>7} {'records':>8} {'occur.':>7}  tools"
    )
    for r in rows:
        e, t, o = ("{}/{}".format(*r[k]) for k in ("expected", "tuxmake", "ours"))
        print(
            f"{r['log']:<32} {e:>6} {t:>8} {o:>7} {r['records']:>8} {r['occurrences']:>7}"
            f"  {','.join(r['tools'])}"
        )
    print("first error kbuild reports:")
    for r in rows:
        print(f"  {r['log']}: {r['first'][:110] or '-'}")
    same = sum(r["ours"] == r["expected"] for r in rows)
    print(f"same counts: {same} of {len(rows)} logs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
