"""Parsers of setting values: (raw text, where it came from) -> value, or a
KbuildUserError naming the option, variable or ini key and what is accepted.

Imported at every pytest start (options.py declares the settings with
them). This is the bottom layer: the value grammars that modules above use
(the shard, the jobserver mode, the image template, redact) live here, and
those modules import them from here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .errors import KbuildUserError, KcidbError, ShardError, quoted

Parse = Callable[[str, str], Any]
PULL_POLICIES = ("missing", "always", "never")
NETWORKS = ("none", "host", "default")
# never: warnings are reported only; warnings: any warning fails its target;
# new-warnings: a warning the baseline did not have fails it.
COMPRESSIONS = ("xz", "zstd", "none")  # -z/--compression (compression.py)
FAIL_ON = ("never", "warnings", "new-warnings")
# A FIFO holds 64 KiB on Linux; far more tokens than any machine has CPUs.
MAX_SLOTS = 4096
MODES = ("auto", "on", "off")  # --kbuild-jobserver, besides a number of slots
IMAGE_PLACEHOLDERS = ("arch", "toolchain")
SHARD_ACCEPTED = "I/N with 1 <= I <= N, e.g. 2/4"
MAX_SHARDS = 10_000  # more machines than any CI has; a bound keeps the plan small
SHARD_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
# KernelCI's KCIDB: an origin (the CI system's name, the part of every id
# before its ":") is kcidb-io's origin_pattern; the base URL of the files
# is one a KCIDB reader can fetch or open.
KCIDB_ORIGIN = re.compile(r"[a-z0-9_]+")
KCIDB_ORIGIN_ACCEPTED = "lower-case letters, digits and _ (KCIDB's [a-z0-9_]+), e.g. my_ci"
KCIDB_URL_SCHEMES = ("http", "https", "file")
# Characters a URI cannot hold as they are (RFC 3986): a base URL with them
# would make every file URL of the document invalid.
_NOT_IN_URI = re.compile(r'[\s\x00-\x1f\x7f<>"{}|\\^`]')


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


def redact(url: str) -> str:
    """*url* without its password (``redis://:secret@host`` -> ``redis://:***@host``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{user}:***@{host}").geturl()


def image_reference(template: str, arch: str, toolchain: str) -> str:
    """*template* with {arch} and {toolchain} filled in; other braces are errors."""
    names = re.findall(r"{([^{}]*)}", template)
    bad = [n for n in names if n not in IMAGE_PLACEHOLDERS]
    if bad or template.count("{") != len(names) or template.count("}") != len(names):
        shown = f"{{{bad[0]}}}" if bad else "an unbalanced brace"
        raise KbuildUserError(
            f"image {template!r}: {shown} is not a placeholder; accepted: "
            + ", ".join(f"{{{p}}}" for p in IMAGE_PLACEHOLDERS)
        )
    return template.replace("{arch}", arch).replace("{toolchain}", toolchain)


def image_template(value: str, where: str) -> str:
    text(value, where)
    try:
        image_reference(value, "x86_64", "gcc")
    except KbuildUserError as err:
        raise KbuildUserError(f"{where}: {err}") from None
    return value


def jobserver_mode(value: str, where: str) -> str | int:
    """``auto``, ``on``, ``off`` or a number of slots (1..MAX_SLOTS)."""
    v = value.strip().lower()
    if v in MODES:
        return v
    try:
        n = int(v)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_SLOTS:
        raise KbuildUserError(
            f"{where}: {quoted(value)} is not a jobserver mode; accepted: "
            f"{', '.join(MODES)} or a number of slots from 1 to {MAX_SLOTS}"
        )
    return n


@dataclass(frozen=True)
class Shard:
    """Shard *index* (1-based) of *total*."""

    index: int
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


def shard(value: str, where: str) -> Shard:
    """The shard named by *value* ("I/N"); *where* names the option or variables."""
    m = SHARD_SPEC.match(value)
    if not m:
        raise ShardError(value, where, "is not I/N", SHARD_ACCEPTED)
    index, total = int(m[1]), int(m[2])
    if total < 1:
        problem = f"has {total} shards; there must be at least 1"
        raise ShardError(value, where, problem, SHARD_ACCEPTED)
    if total > MAX_SHARDS:
        problem = f"has {total} shards; at most {MAX_SHARDS}"
        raise ShardError(value, where, problem, SHARD_ACCEPTED)
    if not 1 <= index <= total:
        problem = f"has index {index} outside 1..{total} (shards count from 1)"
        raise ShardError(value, where, problem, SHARD_ACCEPTED)
    return Shard(index, total)


def kcidb_origin(value: str, where: str) -> str:
    """A KCIDB origin: ``[a-z0-9_]+``, the part of each id before its colon."""
    v = str(value).strip()
    if not KCIDB_ORIGIN.fullmatch(v):
        raise KcidbError(where, str(value), "is not a KCIDB origin", KCIDB_ORIGIN_ACCEPTED)
    return v


def kcidb_base_url(value: str, where: str) -> str:
    """The URL a results dir is served at (http, https or file), without a
    query or fragment: each file's path is appended to it."""
    v = text(value, where)
    *others, last = (f"{s}://" for s in KCIDB_URL_SCHEMES)
    accepted = f"an {', '.join(others)} or {last} URL of where the results dir is served"
    try:
        parts = urlsplit(v)
        shown = redact(v)  # a password in the URL is not printed
    except ValueError as err:
        raise KcidbError(where, v, f"is not a URL ({err})", accepted) from None
    if parts.scheme not in KCIDB_URL_SCHEMES:
        scheme = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
        raise KcidbError(where, shown, f"has {scheme}", accepted)
    if parts.scheme != "file" and not parts.hostname:
        raise KcidbError(where, shown, "has no host", accepted)
    if parts.query or parts.fragment:
        raise KcidbError(
            where, shown, "has a query or fragment, which file paths cannot follow", accepted
        )
    if _NOT_IN_URI.search(v):
        raise KcidbError(
            where,
            shown,
            "has spaces or characters a URL cannot hold (percent-encode them)",
            accepted,
        )
    return v
