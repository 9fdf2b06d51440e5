"""The ``pytest-kbuild images`` and ``pytest-kbuild bisect`` subcommands:
their arguments and what they print. Thin: the work is in images.py and
bisect.py."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import matrix
from ..errors import KbuildInfraError, KbuildUserError
from ..run import signals
from . import args as cliargs
from . import bisect, images


def images_parser(sub: Any) -> None:
    im = sub.add_parser("images", help="build, list and check curated container images")
    isub = im.add_subparsers(dest="images_command", required=True)
    for name, text in (
        ("build", "build the image of an arch and toolchain from its recipe"),
        ("check", "check that an image has the tools its recipe promises"),
    ):
        c = isub.add_parser(name, help=text)
        c.add_argument("--arch", "-a", required=True, help="arch (as in the matrix)")
        c.add_argument("--toolchain", "-t", required=True, help="gcc, gcc-N, clang, clang-N")
        c.add_argument("--engine", "-e", default="podman", help="podman (default) or docker")
        c.add_argument("--image", "-i", help="image name (default: localhost/kbuild/ARCH_TC)")
        if name == "build":
            c.add_argument(
                "--base",
                help=f"base image (default: {images.BASE_IMAGE} if present, "
                f"else {images.FALLBACK_BASE})",
            )
            c.add_argument("--network", help="network for the build's apt (e.g. host)")
    b = isub.add_parser("base", help="make a Debian base image with debootstrap (as root)")
    b.add_argument("--engine", "-e", default="podman", help="podman (default) or docker")
    b.add_argument("--name", default=images.BASE_IMAGE, help="image name")
    b.add_argument("--suite", default="bookworm", help="Debian suite (default: bookworm)")
    b.add_argument("--mirror", help="Debian mirror URL (default: this host's apt mirror)")
    ls = isub.add_parser("list", help="list curated images present locally")
    ls.add_argument("--engine", "-e", default="podman", help="podman (default) or docker")


def images_command(opts: argparse.Namespace) -> int:
    if opts.images_command == "base":
        image_id = images.make_base(opts.engine, opts.name, opts.suite, opts.mirror)
        print(f"I: {opts.name} {image_id}")
        return cliargs.EXIT_OK
    if opts.images_command == "list":
        for row in images.listing(opts.engine):
            print("\t".join(row.values()))
        return cliargs.EXIT_OK
    recipe = images.Recipe.of(opts.arch, opts.toolchain)
    name = recipe.name(opts.image) if opts.image else recipe.name()
    if opts.images_command == "build":
        image_id, took = images.build(recipe, opts.engine, opts.base, name, opts.network)
        print(f"I: built {name} {image_id} in {took:.0f} s")
        return cliargs.EXIT_OK
    missing = images.check(recipe, opts.engine, name)
    if missing:
        print(f"E: {name} lacks: {' '.join(missing)}", file=sys.stderr)
        return cliargs.EXIT_FAILED
    print(f"I: {name} has all {len(recipe.tools)} tools: {' '.join(recipe.tools)}")
    return cliargs.EXIT_OK


def bisect_parser(sub: Any) -> None:
    bi = sub.add_parser(
        "bisect",
        help="the first commit at which one build of a matrix fails (git bisect in a worktree)",
        description="Find the first commit between --good and --bad at which build --build "
        "of the matrix fails (or, with --diagnostic, prints that text). Builds run in a git "
        "worktree of the tree, never in your checkout; an infrastructure ERROR skips a commit.",
    )
    bi.add_argument("--good", required=True, metavar="REV", help="a revision that builds")
    bi.add_argument("--bad", required=True, metavar="REV", help="a revision that fails")
    bi.add_argument("--kbuild-matrix", "--matrix", dest="matrix", required=True, metavar="M")
    bi.add_argument("--build", required=True, metavar="ID", help="the build id in the matrix")
    bi.add_argument("--target", default="", help="judge this target (default: all the build's)")
    bi.add_argument(
        "--diagnostic",
        default="",
        metavar="TEXT",
        help="bad = a diagnostic containing TEXT (a build failing without it is skipped)",
    )
    bi.add_argument("--tree", help="the git repository's kernel tree (default: the matrix's)")
    bi.add_argument(
        "--workdir", help="worktree, objects, step results and bisect.log (kbuild-bisect/ID)"
    )
    cliargs.build_options(bi)


def bisect_command(opts: argparse.Namespace) -> int:
    """``pytest-kbuild bisect``: 0 found, 1 bad input, 125 the machine could
    not test --good/--bad or only skipped commits are left, 130/143 stopped."""
    m = matrix.load(opts.matrix, opts.tree, tree_where="--tree")
    chosen = next((b for b in m.builds if b.id == opts.build), None)
    if chosen is None:
        known = ", ".join(b.id for b in m.builds[:20]) + (", ..." if len(m.builds) > 20 else "")
        raise KbuildUserError(
            f"--build {opts.build!r} is not a build of {opts.matrix}; it has: {known}"
        )
    if chosen.skip_reason:
        raise KbuildUserError(f"--build {opts.build}: nothing to build: {chosen.skip_reason}")
    workdir = Path(opts.workdir or Path("kbuild-bisect") / chosen.id)
    bisector = bisect.Bisector(
        m.tree,
        chosen,
        cliargs.given_options(opts),
        workdir,
        good=opts.good,
        bad=opts.bad,
        target=opts.target,
        diagnostic=opts.diagnostic,
        say=lambda line: print(line, flush=True),
    )
    with signals.sigterm_interrupts():
        try:
            outcome = bisector.run()
        except KbuildInfraError as err:
            print(f"E: {err}", file=sys.stderr)
            return cliargs.EXIT_INFRA
        except KeyboardInterrupt as err:
            print(f"E: {err or 'interrupted'}; the bisect stopped", file=sys.stderr)
            return (
                signals.EXIT_TERMINATED
                if isinstance(err, signals.Terminated)
                else cliargs.EXIT_INTERRUPTED
            )
    for line in bisect.describe(outcome):
        print(line)
    return cliargs.EXIT_OK if outcome.first_bad else cliargs.EXIT_INFRA
