"""What a toolchain directory (``llvm@DIR``, ``gcc@DIR``) holds: its
compiler files and the version the compiler reports.

The compiler is asked on this host, once per path: a container runtime
mounts the directory at the same path, so it runs the same binary there.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
from collections.abc import Iterable
from functools import cache

PROBE_TIMEOUT = 30  # seconds a compiler gets to print its version

# The first dotted number of a version line: "Debian clang version 16.0.6
# (15)", "clang version 21.1.0 (https://...)", "aarch64-linux-gcc (GCC)
# 14.2.0", or -dumpfullversion's bare "12.2.0". Not one inside a word
# ("x86_64", "gcc-12").
_VERSION = re.compile(r"(?<![\w.-])(\d+\.\d+(?:\.\d+)*)(?![\w.])")


def parse_version(text: str | None) -> str | None:
    """The version number of the first non-empty line of *text*, or None."""
    for line in (text or "").splitlines():
        if line.strip():
            m = _VERSION.search(line)
            return m.group(1) if m else None
    return None


def version_key(version: str) -> tuple[int, ...]:
    """``"11.0.0"`` -> ``(11, 0, 0)``, for comparing versions."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def older(version: str, minimum: str) -> bool:
    """True when *version* is older than *minimum* (``5.1`` equals ``5.1.0``)."""
    a, b = version_key(version), version_key(minimum)
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)) < b + (0,) * (width - len(b))


def executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find(directory: str, patterns: Iterable[str]) -> str | None:
    """The first executable file of *directory* matching one of *patterns*
    (``gcc``, ``*-gcc``: shell patterns, tried in turn, matches in name
    order), or None."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    for pattern in patterns:
        for name in fnmatch.filter(names, pattern):
            path = os.path.join(directory, name)
            if executable(path):
                return path
    return None


@cache
def probe(compiler: str, args: tuple[str, ...]) -> tuple[str | None, str]:
    """(the version *compiler* prints when run with *args*, "") or (None, why not)."""
    shown = shlex.join([compiler, *args])
    try:
        done = subprocess.run(
            [compiler, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=PROBE_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return None, f"`{shown}` did not answer within {PROBE_TIMEOUT} s"
    except OSError as err:
        return None, f"cannot run {compiler}: {err.strerror or err}"
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        detail = f": {said[0]}" if said else ""
        return None, f"`{shown}` exited with status {done.returncode}{detail}"
    version = parse_version(done.stdout)
    if version is None:
        first = (done.stdout.strip().splitlines() or [""])[0]
        return None, f"`{shown}` printed no version number (its first line: {first!r})"
    return version, ""
