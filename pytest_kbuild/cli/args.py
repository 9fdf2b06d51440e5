"""What the ``kbuild`` and ``pytest-kbuild`` command lines share: exit
codes, the argument parser that exits 1 on bad arguments, and BuildOptions'
kbuild spellings (-j, --timeout, --image...) as arguments."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from .. import options
from ..errors import KbuildError

# 125 is what `git bisect run` takes for "cannot test this commit": an
# infrastructure error must not mark a commit good or bad.
EXIT_OK, EXIT_INPUT, EXIT_FAILED, EXIT_INFRA, EXIT_INTERRUPTED = 0, 1, 2, 125, 130


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
