"""The host's pip settings an image build needs to reach the same PyPI: its
index URL and CA bundle (a host behind a TLS-inspecting proxy trusts a CA the
image's ca-certificates does not have). Read from pip itself, so that pip's
environment variables and configuration files answer as they do on the host."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# pip config list: "global.index-url='https://...'", ":env:.cert='/etc/...'"
_SCOPES = (":env:", "global", "install")


@dataclass(frozen=True)
class PipIndex:
    """Where the host's pip installs from: *index_url* ("" for pip's
    default) and the CA bundle it trusts (None for the system's)."""

    index_url: str = ""
    cert: Path | None = None


def parse(listing: str) -> PipIndex:
    """The index URL and CA bundle in `pip config list` output, the
    environment's first, then the global and install sections'."""
    values: dict[tuple[str, str], str] = {}
    for line in listing.splitlines():
        key, sep, value = line.partition("=")
        scope, dot, name = key.rpartition(".")
        if sep and dot:
            values[(scope, name)] = value.strip().strip("'\"")
    found = {
        name: next((values[(s, name)] for s in _SCOPES if values.get((s, name))), "")
        for name in ("index-url", "cert")
    }
    return PipIndex(found["index-url"], Path(found["cert"]) if found["cert"] else None)


def host() -> PipIndex:
    """This host's pip settings; pip's defaults when pip cannot tell."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return PipIndex()
    found = parse(done.stdout) if done.returncode == 0 else PipIndex()
    if found.cert is not None and not found.cert.is_file():
        return PipIndex(found.index_url)
    return found
