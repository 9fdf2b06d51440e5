"""Command lines: ``kbuild`` (one build, no pytest) and ``pytest-kbuild``
(list definitions, expand a matrix, merge shards' results, print
diagnostics; images and bisect are in subcommands.py). Thin: the work is in
build.py, matrix.py and merge.py."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import json
import os
import platform
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

from .. import definitions, matrix, runtime, spec
from ..build.build import Build
from ..definitions import toolchain
from ..definitions.targets import default_targets, with_dependencies
from ..errors import KbuildError, KbuildInfraError
from ..report import codequality, grouping, merge
from ..report import html as report
from ..results import BUILD_LOG, Status, TargetResult
from ..run import signals, tempdirs
from . import args as cliargs
from . import follow, hostpackages, subcommands
from .args import EXIT_FAILED, EXIT_INFRA, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK

_MAKE_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# What a command killed by SIGPIPE exits with in a shell (128 + 13), as
# `seq 100000 | head -1` does: a reader that stopped early is not an error
# to print, but the output is incomplete.
EXIT_PIPE = 141


def _version() -> str:
    return metadata.version("pytest-kbuild")


def _quiet_pipe(main: Callable[[Sequence[str] | None], int]) -> Callable[..., int]:
    """*main*, exiting with EXIT_PIPE and no traceback when whoever reads
    its output (``| head -1``) closed the pipe."""

    @functools.wraps(main)
    def wrapped(argv: Sequence[str] | None = None) -> int:
        try:
            code = main(argv)
            sys.stdout.flush()  # inside the try: a block-buffered pipe fails here
            return code
        except BrokenPipeError:
            # Python flushes stdout again at exit: point it at /dev/null so
            # that this flush does not print "Exception ignored ...".
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            return EXIT_PIPE

    return wrapped


def _key_value(value: str) -> tuple[str, str]:
    if "=" not in value:
        raise argparse.ArgumentTypeError(f"{value!r} is not KEY=VALUE")
    key, _, val = value.partition("=")
    return key, val


def _env_pair(value: str) -> tuple[str, str]:
    """-e KEY=VALUE, the name checked by the rule matrices use (``=value``
    has none)."""
    key, val = _key_value(value)
    try:
        return spec.variable(key, val, "env")
    except KbuildError as err:
        raise argparse.ArgumentTypeError(f"{value!r}: {err}") from None


def _given(value: str) -> str:
    """A value that must say something: ``-a ''`` is a mistake, not the default."""
    if not value.strip():
        raise argparse.ArgumentTypeError("empty value; leave the option out for its default")
    return value


# Help of the BuildSpec fields kbuild takes (BuildOptions carry their own).
_SPEC_HELP = {
    "arch": "architecture (default: this machine's)",
    "toolchain": "gcc, gcc-N, clang, clang-N (default: gcc)",
    "kconfig": "*config target, file or URL (default: defconfig)",
    "kconfig_add": "fragment: file, URL, CONFIG_X=y, make:target (repeatable)",
    "wrapper": "none, ccache or sccache",
    "runtime": "local, podman or docker (default: local)",
    "env": "KEY=VALUE for every step (repeatable)",
    "target_timeouts": "TARGET=SECONDS: that target's timeout, over --timeout (repeatable)",
}


def _kbuild_parser() -> argparse.ArgumentParser:
    """kbuild's arguments: the BuildSpec and BuildOptions fields that declare
    a kbuild spelling, plus where the tree, results and objects are."""
    p = cliargs.Parser(
        prog="kbuild",
        description="Build one Linux kernel configuration, target by target. "
        "Positional arguments are targets and KEY=VALUE make variables.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    p.add_argument(
        "-C", "--directory", default=".", type=_given, help="kernel source tree (default: .)"
    )
    for f in spec.kbuild_fields():
        if f.metadata["positional"]:
            continue
        many = f.name in ("kconfig_add", "env", "target_timeouts")
        p.add_argument(
            *f.metadata["kbuild"],
            dest=f.name,
            action="append" if many else "store",
            default=[] if many else None,
            type={"env": _env_pair, "target_timeouts": _key_value}.get(f.name, _given),
            help=_SPEC_HELP[f.name],
        )
    p.add_argument(
        "-o",
        "--output-dir",
        type=_given,
        help="results directory (default: kbuild-results/<build id>)",
    )
    p.add_argument(
        "-b",
        "--build-dir",
        type=_given,
        help="build objects directory (default: temporary); given again, its objects are "
        "used again (an incremental build)",
    )
    p.add_argument(
        "-q", "--quiet", action="store_true", help="print only errors: failed targets and why"
    )
    p.add_argument(
        "--shell",
        action="store_true",
        help="after the targets, open an interactive shell in the build's environment "
        "(runtime, image, mounts, variables; `make` there is the build's make)",
    )
    cliargs.build_options(p)
    p.add_argument(
        "args",
        nargs="*",
        metavar="TARGET|KEY=VALUE",
        help=f"targets (default: {' '.join(default_targets())})",
    )
    return p


@_quiet_pipe
def kbuild_main(argv: Sequence[str] | None = None) -> int:
    """``kbuild``: exit 0 all passed, 2 a target failed, 1 bad input, 125 an
    infrastructure error (``git bisect run`` skips such a commit), 130 Ctrl-C,
    143 SIGTERM."""
    opts = _kbuild_parser().parse_args(argv)
    targets = [a for a in opts.args if not _MAKE_VAR.match(a)]
    try:
        what = spec.BuildSpec.make(
            arch=opts.arch or platform.machine(),
            toolchain=opts.toolchain or "gcc",
            kconfig=opts.kconfig or "defconfig",
            kconfig_add=opts.kconfig_add,
            targets=targets or None,
            make_variables=dict(_key_value(a) for a in opts.args if _MAKE_VAR.match(a)),
            env=dict(opts.env),
            wrapper=opts.wrapper or "none",
            runtime=opts.runtime or _implied_runtime(opts.option_image),
            target_timeouts=dict(opts.target_timeouts),
            runtimes=runtime.Registry(),
            origin="kbuild",
        )
        if what.skip_reason:
            print(f"E: nothing to build: {what.skip_reason}", file=sys.stderr)
            return EXIT_INPUT
        build = Build(
            opts.directory,
            what,
            cliargs.given_options(opts),
            output_dir=opts.output_dir,
            build_dir=opts.build_dir,
            # A build dir given again is used again: only what changed is rebuilt.
            incremental=opts.build_dir is not None,
        )
    except KbuildError as err:
        print(f"E: {err}", file=sys.stderr)
        return EXIT_INPUT
    say = functools.partial(print, flush=True)
    # What a run killed with SIGKILL left in the temporary root.
    for stale in tempdirs.sweep():
        if not opts.quiet:
            say(f"I: {stale.line()}")
    # SIGTERM (a CI job cancelled) stops the build as Ctrl-C does, exit 143.
    with signals.sigterm_interrupts():
        try:
            try:
                build.prepare()
            finally:
                # After prepare(): a container build's line pins the image digest.
                if not opts.quiet:
                    say(f"# to reproduce this build: {build.reproducer()}")
            live = build.options.verbose and not opts.quiet
            log = build.output_dir / BUILD_LOG
            with follow.Follower(log, sys.stdout.buffer) if live else _NoFollower() as shown:
                for name in with_dependencies(build.targets):
                    r = build.run_target(name)
                    shown.flush()  # make's output first, then the target's line
                    _report(r, opts.quiet)
            if opts.shell and not opts.quiet:
                say(
                    f"I: a shell in the build's environment ({build.bound.name} runtime, "
                    f"build dir {build.build_dir}); exit it to finish"
                )
            if opts.shell:
                build.shell()
        except KbuildError as err:
            print(f"E: {err}", file=sys.stderr)
            return EXIT_INFRA if isinstance(err, KbuildInfraError) else EXIT_INPUT
        except KeyboardInterrupt as err:
            why = str(err) or "interrupted"
            build.interrupted(why)
            print(f"E: {why}; the running target is marked INTERRUPTED", file=sys.stderr)
            return (
                signals.EXIT_TERMINATED if isinstance(err, signals.Terminated) else EXIT_INTERRUPTED
            )
        finally:
            build.finish()
            if build.unwritten:
                print(f"E: {build.unwritten}", file=sys.stderr)
    if build.unwritten:
        return EXIT_INFRA
    if not opts.quiet:
        print(f"I: build output in {build.output_dir}")
    return {
        Status.ERROR: EXIT_INFRA,
        Status.INTERRUPTED: EXIT_INTERRUPTED,
        Status.FAIL: EXIT_FAILED,
    }.get(build.result.status, EXIT_OK)


class _NoFollower(contextlib.nullcontext["_NoFollower"]):
    """What kbuild uses for a Follower without -v."""

    def __init__(self) -> None:
        super().__init__(self)

    def flush(self) -> None:
        pass


def _report(r: TargetResult, quiet: bool) -> None:
    """The line of one target (with -q: only of a target that did not pass)."""
    if quiet and r.status not in (Status.FAIL, Status.ERROR):
        return
    detail = f" ({r.reason})" if r.status is not Status.PASS and r.reason else ""
    took = datetime.timedelta(seconds=round(r.duration, 1))
    level = "E" if quiet else "I"
    print(f"{level}: {r.name}: {r.status.value} in {took}{detail}", flush=True)
    for line in r.errors:  # a WARNING's errors did not fail it
        print(f"{'W' if r.status is Status.WARNING else 'E'}:   {line}", flush=True)
    for i, a in enumerate(r.attempts, 1):  # --retries ran it again
        print(f"W:   try {i} of {len(r.attempts) + 1}: {a['reason']}", flush=True)


def _implied_runtime(image: str | None) -> str:
    """-i IMAGE without -r: the first container engine on PATH (podman, then
    docker; podman when neither is), as TuxMake's -i implies docker."""
    if not image:
        return "local"
    for name in runtime.CONTAINER_RUNTIMES:
        if shutil.which(name):
            return name
    return runtime.CONTAINER_RUNTIMES[0]


@_quiet_pipe
def main(argv: Sequence[str] | None = None) -> int:
    """``pytest-kbuild list KIND`` / ``expand MATRIX`` / ``merge OUT DIR...`` /
    ``packages MATRIX...`` / ``diagnostics`` / ``report``."""
    p = argparse.ArgumentParser(
        prog="pytest-kbuild", description="inspect definitions and matrices, merge results"
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
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
    dg = sub.add_parser("diagnostics", help="each distinct diagnostic of a results dir once")
    dg.add_argument("results_dir", metavar="RESULTS_DIR")
    dg.add_argument("--json", action="store_true", help=f"print {grouping.DIAGNOSTICS}'s JSON")
    dg.add_argument(
        "--codequality",
        metavar="FILE",
        help="also write them as a GitLab Code Quality report (Code Climate JSON)",
    )
    rp = sub.add_parser(
        "report", help="write the self-contained HTML report of a results dir (merged ones too)"
    )
    rp.add_argument("results_dir", metavar="RESULTS_DIR")
    rp.add_argument("-o", "--output", metavar="FILE", help="default: RESULTS_DIR/report.html")
    pk = sub.add_parser(
        "packages",
        help="the Debian packages the builds of matrices need where make runs "
        "(for apt-get install); with --pypi, what they need from PyPI instead "
        "(for pip install --no-deps; every target's without a MATRIX)",
    )
    pk.add_argument("--pypi", action="store_true", help="print the PyPI requirements")
    pk.add_argument("matrices", metavar="MATRIX", nargs="*")
    subcommands.images_parser(sub)
    subcommands.bisect_parser(sub)
    opts = p.parse_args(argv)
    try:
        if opts.command == "packages":
            if not opts.matrices and not opts.pypi:
                pk.error("give at least one MATRIX (without one, only --pypi answers)")
            specs = [b for m in opts.matrices for b in matrix.load(m, None, check=False).builds]
            if opts.pypi:
                wanted = hostpackages.pypi_for_builds(specs) if specs else hostpackages.pypi_all()
            else:
                wanted = hostpackages.for_builds(specs)
            print(" ".join(wanted))
            return EXIT_OK
        if opts.command == "images":
            return subcommands.images_command(opts)
        if opts.command == "bisect":
            return subcommands.bisect_command(opts)
        if opts.command == "merge":
            done = merge.merge(Path(opts.out), [Path(d) for d in opts.dirs])
            junit = f", {done.testcases} testcases in {merge.JUNIT}" if done.testcases else ""
            print(
                f"I: merged {len(opts.dirs)} results dirs into {done.out}: "
                f"{done.builds} builds{junit}"
            )
            return EXIT_OK
        if opts.command == "report":
            try:
                out = report.write(Path(opts.results_dir), opts.output and Path(opts.output))
            except OSError as err:
                print(f"E: report {opts.output or opts.results_dir}: {err}", file=sys.stderr)
                return EXIT_INPUT
            print(f"I: HTML report of {opts.results_dir}: {out}")
            return EXIT_OK
        if opts.command == "diagnostics":
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
    for b in m.builds:
        if opts.json:
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
                        **({"job": b.job, "unavailable": dict(b.unavailable)} if b.job else {}),
                    }
                )
            )
        else:
            skip = f"  # skipped: {b.skip_reason}" if b.skip_reason else ""
            skip += "".join(f"  # left out: {why}" for _, why in b.left_out)
            skip += "".join(f"  # SKIP {t}: {why}" for t, why in b.unavailable)
            print(f"{b.id}: {' '.join(b.targets)}{skip}")
    return EXIT_OK
