"""The arguments of ``pytest-kbuild``'s subcommands that print or write what
a results dir (a merged one too) says: diagnostics, report, summary, sarif
and kcidb. What each does is in commands.py and report/."""

from __future__ import annotations

from typing import Any

from ..report import grouping, kcidb, sarif


def add_parsers(sub: Any) -> None:
    """Add those subcommands to *sub* (argparse's subparsers)."""
    _diagnostics(sub)
    _report_and_summary(sub)
    _sarif(sub)
    _kcidb(sub)


def _diagnostics(sub: Any) -> None:
    dg = sub.add_parser("diagnostics", help="each distinct diagnostic of a results dir once")
    dg.add_argument("results_dir", metavar="RESULTS_DIR")
    dg.add_argument("--json", action="store_true", help=f"print {grouping.DIAGNOSTICS}'s JSON")
    dg.add_argument(
        "--codequality",
        metavar="FILE",
        help="also write them as a GitLab Code Quality report (Code Climate JSON)",
    )


def _report_and_summary(sub: Any) -> None:
    rp = sub.add_parser(
        "report", help="write the self-contained HTML report of a results dir (merged ones too)"
    )
    rp.add_argument("results_dir", metavar="RESULTS_DIR")
    rp.add_argument("-o", "--output", metavar="FILE", help="default: RESULTS_DIR/report.html")
    sm = sub.add_parser(
        "summary",
        help="the Markdown summary of a results dir (merged ones too), as a run in "
        "GitHub Actions appends it to $GITHUB_STEP_SUMMARY",
    )
    sm.add_argument("results_dir", metavar="RESULTS_DIR")


def _sarif(sub: Any) -> None:
    sf = sub.add_parser(
        "sarif",
        help="write the diagnostics of a results dir (merged ones too) as SARIF 2.1.0, "
        "for GitHub code scanning (github/codeql-action/upload-sarif)",
    )
    sf.add_argument("results_dir", metavar="RESULTS_DIR")
    sf.add_argument("-o", "--output", metavar="FILE", help=f"default: RESULTS_DIR/{sarif.FILE}")
    sf.add_argument(
        "--workspace",
        metavar="DIR",
        help="the repository the paths are relative to (default: $GITHUB_WORKSPACE, "
        "else the current directory)",
    )
    sf.add_argument(
        "--absent",
        action="store_true",
        help="also the baseline's diagnostics that are gone (baselineState absent); "
        "off by default, since GitHub would show them as alerts",
    )


def _kcidb(sub: Any) -> None:
    kc = sub.add_parser(
        "kcidb",
        help="write a results dir (merged ones too) as one KernelCI KCIDB document "
        "(checkout, builds, tests), for kcidb-submit",
    )
    kc.add_argument("results_dir", metavar="RESULTS_DIR")
    kc.add_argument(
        "--origin",
        required=True,
        metavar="NAME",
        help="your CI system's KCIDB origin, before the colon of every id ([a-z0-9_]+)",
    )
    kc.add_argument(
        "--kcidb-base-url",
        metavar="URL",
        help="the http://, https:// or file:// URL RESULTS_DIR is served at: log and file "
        "URLs are relative to it (default: the document has no URLs)",
    )
    kc.add_argument("-o", "--output", metavar="FILE", help=f"default: RESULTS_DIR/{kcidb.DOCUMENT}")
