"""``kbuild``: one build, target by target, without pytest (TuxMake's
command line, on pytest-kbuild's Build). Thin: the work is in build/."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import platform
import re
import shutil
import sys
from collections.abc import Sequence

from .. import runtime, spec
from ..build.build import Build
from ..definitions.targets import default_targets, with_dependencies
from ..errors import KbuildError, KbuildInfraError
from ..results import BUILD_LOG, Status, TargetResult
from ..run import signals, tempdirs
from . import args as cliargs
from . import follow
from .args import (
    EXIT_FAILED,
    EXIT_INFRA,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    quiet_pipe,
    version,
)

_MAKE_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


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
    "toolchain": "gcc, gcc-N, clang, clang-N, or from a directory llvm@DIR, gcc@DIR, "
    "NAME@DIR (default: gcc)",
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
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
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


@quiet_pipe
def kbuild_main(argv: Sequence[str] | None = None) -> int:
    """``kbuild``: exit 0 all passed, 2 a target failed, 1 bad input, 125 an
    infrastructure error (``git bisect run`` skips such a commit), 130 Ctrl-C,
    143 SIGTERM."""
    opts = _kbuild_parser().parse_args(argv)
    try:
        what = _spec(opts)
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
    # What a run killed with SIGKILL left in the temporary root.
    for stale in tempdirs.sweep():
        if not opts.quiet:
            print(f"I: {stale.line()}", flush=True)
    # SIGTERM (a CI job cancelled) stops the build as Ctrl-C does, exit 143.
    with signals.sigterm_interrupts():
        stopped = _run(build, opts)
    if stopped is not None:
        return stopped
    if build.unwritten:
        return EXIT_INFRA
    if not opts.quiet:
        print(f"I: build output in {build.output_dir}")
    return {
        Status.ERROR: EXIT_INFRA,
        Status.INTERRUPTED: EXIT_INTERRUPTED,
        Status.FAIL: EXIT_FAILED,
    }.get(build.result.status, EXIT_OK)


def _spec(opts: argparse.Namespace) -> spec.BuildSpec:
    """The BuildSpec of kbuild's arguments: positional targets and KEY=VALUE."""
    targets = [a for a in opts.args if not _MAKE_VAR.match(a)]
    return spec.BuildSpec.make(
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


def _run(build: Build, opts: argparse.Namespace) -> int | None:
    """Run *build*'s targets (and the shell); the exit status when an error
    or an interrupt stopped it, else None."""
    say = functools.partial(print, flush=True)
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
        return signals.EXIT_TERMINATED if isinstance(err, signals.Terminated) else EXIT_INTERRUPTED
    finally:
        build.finish()
        if build.unwritten:
            print(f"E: {build.unwritten}", file=sys.stderr)
    return None


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
    detail = f" ({r.reason})" if r.status != Status.PASS and r.reason else ""
    took = datetime.timedelta(seconds=round(r.duration, 1))
    level = "E" if quiet else "I"
    print(f"{level}: {r.name}: {r.status.value} in {took}{detail}", flush=True)
    for line in r.errors:  # a WARNING's errors did not fail it
        print(f"{'W' if r.status == Status.WARNING else 'E'}:   {line}", flush=True)
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
