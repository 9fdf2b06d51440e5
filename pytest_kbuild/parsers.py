"""Parsers of setting values: (raw text, where it came from) -> value, or a
KbuildUserError naming the option, variable or ini key and what is accepted.

Imported at every pytest start (options.py declares the settings with
them): what a parser needs beyond this is imported when it runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import KbuildUserError, quoted

if TYPE_CHECKING:
    from .run.shard import Shard

Parse = Callable[[str, str], Any]
PULL_POLICIES = ("missing", "always", "never")
NETWORKS = ("none", "host", "default")
# never: warnings are reported only; warnings: any warning fails its target;
# new-warnings: a warning the baseline did not have fails it.
COMPRESSIONS = ("xz", "zstd", "none")  # -z/--compression (compression.py)
FAIL_ON = ("never", "warnings", "new-warnings")


def text(value: str, where: str) -> str:
    if not value.strip():
        raise KbuildUserError(f"{where}: empty value")
    return value.strip()


def positive_int(value: str, where: str) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        n = 0
    if n < 1 or n > 1_000_000:
        raise KbuildUserError(
            f"{where}: {quoted(str(value))} is not a whole number from 1 to 1000000"
            if n > 1_000_000
            else f"{where}: {quoted(str(value))} is not a positive whole number"
        )
    return n


def count(value: str, where: str) -> int:
    """A whole number from 0 to 100 (how often to try again)."""
    try:
        n = int(str(value).strip())
    except ValueError:
        n = -1
    if not 0 <= n <= 100:
        raise KbuildUserError(f"{where}: {quoted(str(value))} is not a whole number from 0 to 100")
    return n


def seconds(value: str, where: str) -> float:
    try:
        s = float(str(value).strip())
    except ValueError:
        s = -1.0
    if not 0 < s < 1e9:
        raise KbuildUserError(f"{where}: {quoted(str(value))} is not a positive number of seconds")
    return s


def seconds_or_off(value: str, where: str) -> float:
    """A positive number of seconds, or 0 / ``off`` for none."""
    if str(value).strip().lower() in ("0", "0.0", "off"):
        return 0.0
    try:
        return seconds(value, where)
    except KbuildUserError:
        raise KbuildUserError(
            f"{where}: {quoted(str(value))} is not a positive number of seconds or 0/off"
        ) from None


def url(value: str, where: str) -> str:
    u = text(value, where)
    scheme, sep, rest = u.partition("://")
    if not (sep and scheme and rest):
        from .definitions.toolchain import redact

        raise KbuildUserError(f"{where}: {quoted(redact(u))} is not a URL like redis://HOST:PORT")
    return u


def boolean(value: str, where: str) -> bool:
    v = str(value).strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off", ""):
        return False
    raise KbuildUserError(
        f"{where}: {quoted(str(value))} is not a boolean; accepted: 1/0, true/false, yes/no, on/off"
    )


def choice(what: str, accepted: tuple[str, ...]) -> Parse:
    def parse(value: str, where: str) -> str:
        if value not in accepted:
            raise KbuildUserError(
                f"{where}: {what} {quoted(str(value))} is not known; "
                f"accepted: {', '.join(accepted)}"
            )
        return value

    return parse


def kernel_image_name(value: str, where: str) -> str:
    """A kernel image's file name (``Image.bz2``, ``vmlinux``): no path."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", value):
        raise KbuildUserError(
            f"{where}: {value!r} is not a kernel image file name; accepted: a name such as "
            "Image.bz2, zImage or vmlinux (no directory)"
        )
    return value


def image_template(value: str, where: str) -> str:
    from .runtime.container import image_reference

    text(value, where)
    try:
        image_reference(value, "x86_64", "gcc")
    except KbuildUserError as err:
        raise KbuildUserError(f"{where}: {err}") from None
    return value


def jobserver_mode(value: str, where: str) -> str | int:
    from .run.jobserver import parse_mode

    return parse_mode(value, where)


def shard(value: str, where: str) -> Shard:
    from .run.shard import parse

    return parse(value, where)
