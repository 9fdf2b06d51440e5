"""Command lines: ``kbuild`` (one build, no pytest) and ``pytest-kbuild``
(list definitions, expand a matrix, merge shards' results). Thin: the work
is in build.py, matrix.py and merge.py."""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import definitions, images, matrix, merge, runtime, toolchain
from .build import Build
from .errors import KbuildError
from .results import Status
from .targets import default_targets, with_dependencies

EXIT_OK, EXIT_INPUT, EXIT_FAILED = 0, 1, 2
_MAKE_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _key_value(value: str) -> tuple[str, str]:
    if "=" not in value:
        raise argparse.ArgumentTypeError(f"{value!r} is not KEY=VALUE")
    key, _, val = value.partition("=")
    return key, val


class _Parser(argparse.ArgumentParser):
    """Bad arguments are bad input: exit 1, since 2 means a target failed."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def _kbuild_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kbuild",
        description="Build one Linux kernel configuration, target by target. "
        "Positional arguments are targets and KEY=VALUE make variables.",
    )
    p.add_argument("-C", "--directory", default=".", help="kernel source tree (default: .)")
    p.add_argument("-a", "--target-arch", help="architecture (default: this machine's)")
    p.add_argument(
        "-t", "--toolchain", default="gcc", help="gcc, gcc-N, clang, clang-N (default: gcc)"
    )
    p.add_argument("-k", "--kconfig", default="defconfig", help="*config target, file or URL")
    p.add_argument(
        "-K",
        "--kconfig-add",
        action="append",
        default=[],
        help="fragment: file, URL, CONFIG_X=y, make:target",
    )
    p.add_argument("-w", "--wrapper", default="none", help="none, ccache or sccache")
    p.add_argument(
        "-r", "--runtime", default="local", help="local, podman or docker (default: local)"
    )
    p.add_argument(
        "-i",
        "--image",
        help="container image; {arch}/{toolchain} are filled in; name@sha256:... pins one "
        "(default: localhost/kbuild/{arch}_{toolchain})",
    )
    p.add_argument(
        "--pull", default="missing", help="pull images: missing (default), always, never"
    )
    p.add_argument(
        "--network", default="none", help="container network: none (default), host, default"
    )
    p.add_argument(
        "-e",
        "--environment",
        action="append",
        default=[],
        type=_key_value,
        help="KEY=VALUE for every step",
    )
    p.add_argument("-j", "--jobs", type=int, help="make -j (default: number of CPUs)")
    p.add_argument(
        "-o", "--output-dir", help="results directory (default: kbuild-results/<build id>)"
    )
    p.add_argument("-b", "--build-dir", help="build objects directory (default: temporary)")
    p.add_argument("--keep-build-dir", action="store_true", help="keep the build directory")
    p.add_argument("--cache-dir", help="ccache/sccache directory")
    p.add_argument("--cache-remote", help="ccache/sccache remote storage URL (redis://HOST:PORT)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failing target")
    p.add_argument(
        "args",
        nargs="*",
        metavar="TARGET|KEY=VALUE",
        help=f"targets (default: {' '.join(default_targets())})",
    )
    return p


def kbuild_main(argv: Sequence[str] | None = None) -> int:
    """``kbuild``: exit 0 all passed, 2 a target failed, 1 bad input or infrastructure."""
    opts = _kbuild_parser().parse_args(argv)
    targets = [a for a in opts.args if not _MAKE_VAR.match(a)]
    make_vars = dict(_key_value(a) for a in opts.args if _MAKE_VAR.match(a))
    try:
        build = Build(
            opts.directory,
            target_arch=opts.target_arch,
            toolchain=opts.toolchain,
            kconfig=opts.kconfig,
            kconfig_add=opts.kconfig_add,
            targets=targets or None,
            make_variables=make_vars,
            environment=dict(opts.environment),
            wrapper=opts.wrapper,
            runtime=opts.runtime,
            jobs=opts.jobs,
            output_dir=opts.output_dir,
            build_dir=opts.build_dir,
            fail_fast=opts.fail_fast,
            cache_dir=opts.cache_dir,
            cache_remote=opts.cache_remote,
            keep_build_dir=opts.keep_build_dir,
            image=opts.image,
            pull=opts.pull,
            network=opts.network,
        )
    except KbuildError as err:
        print(f"E: {err}", file=sys.stderr)
        return EXIT_INPUT
    try:
        try:
            build.prepare()
        finally:
            # After prepare(): a container build's line pins the image digest.
            print(f"# to reproduce this build: {build.reproducer()}", flush=True)
        for name in with_dependencies(build.targets):
            r = build.run_target(name)
            detail = f" ({r.reason})" if r.status is not Status.PASS and r.reason else ""
            took = datetime.timedelta(seconds=round(r.duration, 1))
            print(f"I: {name}: {r.status.value} in {took}{detail}", flush=True)
            for line in r.errors:
                print(f"E:   {line}", flush=True)
    except KbuildError as err:
        print(f"E: {err}", file=sys.stderr)
        return EXIT_INPUT
    finally:
        build.finish()
    print(f"I: build output in {build.output_dir}")
    status = build.result.status
    if status in (Status.ERROR, Status.INTERRUPTED):
        return EXIT_INPUT
    return EXIT_FAILED if status is Status.FAIL else EXIT_OK


def _images_parser(sub: Any) -> None:
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


def _images(opts: argparse.Namespace) -> int:
    if opts.images_command == "base":
        image_id = images.make_base(opts.engine, opts.name, opts.suite, opts.mirror)
        print(f"I: {opts.name} {image_id}")
        return EXIT_OK
    if opts.images_command == "list":
        for row in images.listing(opts.engine):
            print("\t".join(row.values()))
        return EXIT_OK
    recipe = images.Recipe.of(opts.arch, opts.toolchain)
    name = recipe.name(opts.image) if opts.image else recipe.name()
    if opts.images_command == "build":
        image_id, took = images.build(recipe, opts.engine, opts.base, name, opts.network)
        print(f"I: built {name} {image_id} in {took:.0f} s")
        return EXIT_OK
    missing = images.check(recipe, opts.engine, name)
    if missing:
        print(f"E: {name} lacks: {' '.join(missing)}", file=sys.stderr)
        return EXIT_FAILED
    print(f"I: {name} has all {len(recipe.tools)} tools: {' '.join(recipe.tools)}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``pytest-kbuild list KIND`` / ``expand MATRIX`` / ``merge OUT DIR...``."""
    p = argparse.ArgumentParser(
        prog="pytest-kbuild", description="inspect definitions and matrices, merge results"
    )
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
    _images_parser(sub)
    opts = p.parse_args(argv)
    try:
        if opts.command == "images":
            return _images(opts)
        if opts.command == "merge":
            done = merge.merge(Path(opts.out), [Path(d) for d in opts.dirs])
            junit = f", {done.testcases} testcases in {merge.JUNIT}" if done.testcases else ""
            print(
                f"I: merged {len(opts.dirs)} results dirs into {done.out}: "
                f"{done.builds} builds{junit}"
            )
            return EXIT_OK
        if opts.command == "list":
            names = {
                "toolchain": toolchain.known,
                "runtime": runtime.available,
            }.get(opts.kind, lambda: definitions.available(opts.kind))()
            for name in names:
                print(name)
            return EXIT_OK
        m = matrix.load(opts.matrix, opts.tree, check=opts.tree is not None, tree_where="--tree")
    except KbuildError as err:
        print(f"E: {err}", file=sys.stderr)
        return EXIT_INPUT
    for spec in m.builds:
        if opts.json:
            print(
                json.dumps(
                    {
                        "id": spec.id,
                        "arch": spec.arch,
                        "toolchain": spec.toolchain,
                        "kconfig": spec.kconfig,
                        "kconfig_add": list(spec.kconfig_add),
                        "targets": list(spec.targets),
                        "skip": spec.skip_reason or None,
                    }
                )
            )
        else:
            skip = f"  # skipped: {spec.skip_reason}" if spec.skip_reason else ""
            print(f"{spec.id}: {' '.join(spec.targets)}{skip}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
