"""What the ``kbuild`` and ``pytest-kbuild`` command lines share: exit
codes, the argument parser that exits 1 on bad arguments, and BuildOptions'
kbuild spellings (-j, --timeout, --image...) as arguments."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any, NoReturn

from .. import options
from ..errors import KbuildError

# 125 is what `git bisect run` takes for "cannot test this commit": an
# infrastructure error must not mark a commit good or bad.
EXIT_OK, EXIT_INPUT, EXIT_FAILED, EXIT_INFRA, EXIT_INTERRUPTED = 0, 1, 2, 125, 130
# What a command killed by SIGPIPE exits with in a shell (128 + 13), as
# `seq 100000 | head -1` does: a reader that stopped early is not an error
# to print, but the output is incomplete.
EXIT_PIPE = 141


def version() -> str:
    return metadata.version("pytest-kbuild")


def quiet_pipe(main: Callable[[Sequence[str] | None], int]) -> Callable[..., int]:
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


class Parser(argparse.ArgumentParser):
    """Bad arguments are bad input: exit 1, since 2 means a target failed."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def option_type(opt: options.Option) -> Any:
    def parse(value: str) -> Any:
        where = opt.kbuild[-1]
        try:
            return opt.parse(value, where)
        except KbuildError as err:
            # argparse names the argument already: "argument -j/--jobs: ..."
            raise argparse.ArgumentTypeError(str(err).removeprefix(f"{where}: ")) from None

    return parse


def build_options(p: argparse.ArgumentParser) -> None:
    """BuildOptions' kbuild spellings (-j, --timeout, --image...) on *p*."""
    for opt in options.BUILD_OPTIONS:
        p.add_argument(
            *opt.kbuild,
            dest=f"option_{opt.name}",
            action="store_true" if opt.flag else "store",
            default=None,
            **({} if opt.flag else {"type": option_type(opt)}),
            help=opt.help,
        )


def given_options(opts: argparse.Namespace) -> options.BuildOptions:
    """The BuildOptions that *opts* (parsed with build_options) give."""
    given = {
        o.name: getattr(opts, f"option_{o.name}")
        for o in options.BUILD_OPTIONS
        if getattr(opts, f"option_{o.name}") is not None
    }
    return options.replace(options.BuildOptions(), **given)
