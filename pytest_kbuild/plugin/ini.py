"""The ini keys ``kbuild_<name>``: declared with the type their setting's
declaration gives (``Option.ini_type``), so that a TOML array, a TOML
boolean and an ini file's text all reach settings.resolve() as what they are,
and read back with pytest's complaint about a bad value turned into the
project's error (the key, the value, what is accepted)."""

from __future__ import annotations

from typing import Any

import pytest

from ..errors import KbuildUserError
from ..options import Option
from ..settings import INI_ACCEPTED


def addini(parser: pytest.Parser, opt: Option) -> None:
    """Declare *opt*'s ini key; None when it is not set (not pytest's default
    of the type: a False from the ini file is not the same as no value)."""
    parser.addini(opt.ini, help=opt.help, type=opt.ini_type, default=None)


def getini(config: pytest.Config, opt: Option) -> Any:
    """The value of *opt*'s ini key as pytest read it; a KbuildUserError if
    pytest rejects it."""
    try:
        return config.getini(opt.ini)
    except (ValueError, TypeError, pytest.UsageError) as err:
        # pytest < 9 raises a bad bool's ValueError as it is; later ones a
        # UsageError, which names the key only for a TOML value.
        said = str(err)
        message = said if opt.ini in said else f"{opt.ini}: {said}"
        raise KbuildUserError(f"{message}; accepted: {INI_ACCEPTED[opt.ini_type]}") from None
