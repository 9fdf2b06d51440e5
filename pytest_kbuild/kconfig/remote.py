"""Fetch a kconfig URL: one deadline for the whole download, every redirect
recorded, and the body checked to be a .config or a fragment before a build
uses it."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..errors import KconfigFetchError, KconfigNotAConfig

FETCH_TIMEOUT = 30.0
FETCH_MAX_BYTES = 16 * 1024 * 1024
MAX_REDIRECTS = 10

_CONFIG_LINE = re.compile(r"^CONFIG_[A-Za-z0-9_]+=.*$")
_SHOWN = 40  # characters of an unexpected body quoted in an error


@dataclass(frozen=True)
class Redirect:
    """One hop: *status* (301, 302, ...) from *source* to *target*."""

    status: int
    source: str
    target: str

    @property
    def other_host(self) -> bool:
        return urlsplit(self.source).netloc != urlsplit(self.target).netloc

    def __str__(self) -> str:
        return f"HTTP {self.status} {self.source} -> {self.target}"


@dataclass(frozen=True)
class Fetched:
    """What a fetch got: the URL asked for, where it ended, how, how much."""

    url: str
    final_url: str
    redirects: tuple[Redirect, ...]
    size: int

    def log_lines(self) -> list[str]:
        """build.log lines: each redirect, a warning for each change of host."""
        out = [f"I: kconfig {self.url} redirected: {hop}" for hop in self.redirects]
        out += [
            f"W: kconfig {self.url} redirected to another host: "
            f"{urlsplit(hop.source).netloc} -> {urlsplit(hop.target).netloc}"
            for hop in self.redirects
            if hop.other_host
        ]
        if self.redirects:
            out.append(f"I: kconfig {self.url} fetched from {self.final_url}")
        return out


def is_http(url: str) -> bool:
    return url.startswith(("https://", "http://"))


def not_a_config(data: bytes) -> str | None:
    """What *data* is instead of a .config or fragment, or None when every
    line is ``CONFIG_X=...``, a comment (``# CONFIG_X is not set`` among
    them) or blank."""
    if not data.strip():
        return "an empty body" if not data else "only whitespace"
    if b"\0" in data:
        return f"binary data (starts with {data[:16]!r})"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"binary data, not UTF-8 text (starts with {data[:16]!r})"
    lines = [line.strip() for line in text.splitlines()]
    bad = next((n for n, s in enumerate(lines, 1) if s and not _is_config_line(s)), None)
    if bad is None:
        return None
    first = next(s for s in lines if s)
    starts = f"starts with {first[:_SHOWN]!r}"
    low = first.lower()
    if low.startswith(("<!doctype html", "<html")) or "<html" in text[:4096].lower():
        return f"an HTML page ({starts})"
    if low.startswith("<"):
        return f"an XML or HTML document ({starts})"
    if low.startswith(("{", "[")):
        return f"JSON or other structured data ({starts})"
    return f"text that is not config lines (line {bad}: {lines[bad - 1][:_SHOWN]!r})"


def _is_config_line(stripped: str) -> bool:
    return stripped.startswith("#") or _CONFIG_LINE.match(stripped) is not None


def fetch(
    url: str, dest: Path, timeout: float = FETCH_TIMEOUT, max_bytes: int = FETCH_MAX_BYTES
) -> Fetched:
    """Download *url* to *dest* within *timeout* seconds in all (connecting,
    redirects, headers and body together: a server that trickles a byte at a
    time still stops at the deadline).

    KconfigFetchError on HTTP errors, the deadline, the size cap, a redirect
    to a URL that is not http(s) or more than MAX_REDIRECTS of them;
    KconfigNotAConfig when the body is not a .config or a fragment. *dest*
    is written only when all is well.
    """
    stop = threading.Event()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = _download(url, timeout, max_bytes, stop)
        except BaseException as err:  # handed to the caller's thread
            box["error"] = err

    # The download runs in a daemon thread so that the caller waits no
    # longer than the deadline whatever the socket does; a thread left
    # behind stops at its next read (each read has the same timeout).
    worker = threading.Thread(target=work, name=f"kconfig fetch {url}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        stop.set()
        raise KconfigFetchError(url, f"timed out after {timeout:g} s")
    if "error" in box:
        raise box["error"]
    data, fetched = box["result"]
    got = not_a_config(data)
    if got is not None:
        raise KconfigNotAConfig(url, got, fetched.final_url)
    dest.write_bytes(data)
    return fetched  # type: ignore[no-any-return]


def _download(
    url: str, timeout: float, max_bytes: int, stop: threading.Event
) -> tuple[bytes, Fetched]:
    # Here, not at the top: matrix/ imports kconfig, and requests costs
    # more to import than all of pytest-kbuild; only a kconfig URL needs it.
    import requests

    deadline = time.monotonic() + timeout
    hops: list[Redirect] = []
    current = url
    try:
        with requests.Session() as session:
            while True:
                left = max(0.1, deadline - time.monotonic())
                with session.get(current, timeout=left, stream=True, allow_redirects=False) as r:
                    if r.is_redirect:
                        target = urljoin(current, r.headers["location"])
                        hops.append(Redirect(r.status_code, current, target))
                        if not is_http(target):
                            raise KconfigFetchError(
                                url,
                                f"redirected from {current} to {target[:200]!r}, which is not "
                                "an http(s) URL (only http and https are followed)",
                            )
                        if len(hops) > MAX_REDIRECTS:
                            raise KconfigFetchError(
                                url, f"more than {MAX_REDIRECTS} redirects (last: {hops[-1]})"
                            )
                        current = target
                        continue
                    if r.status_code != 200:
                        via = f" (redirected to {current})" if hops else ""
                        raise KconfigFetchError(url, f"HTTP {r.status_code} {r.reason}{via}")
                    body = bytearray()
                    for chunk in r.iter_content(8192):
                        if stop.is_set():
                            raise KconfigFetchError(url, "abandoned after the deadline")
                        body += chunk
                        if len(body) > max_bytes:
                            raise KconfigFetchError(url, f"larger than the {max_bytes} byte cap")
                    return bytes(body), Fetched(url, current, tuple(hops), len(body))
    except requests.Timeout:
        raise KconfigFetchError(url, f"timed out after {timeout:g} s") from None
    except requests.RequestException as err:
        raise KconfigFetchError(url, str(err)[:500]) from None
