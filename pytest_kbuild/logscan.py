"""Read a slice of a log, and find the first compiler, linker and make errors
(and count warnings) in a slice of build.log."""

from __future__ import annotations

import re
from pathlib import Path

_COMPILER_ERROR = re.compile(r"^\S+?:\d+(?::\d+)?: (?:fatal )?error: ")
_LINKER_ERROR = re.compile(
    r"(?:^|\s)(?:\S*ld(?:\.\w+)?|\S*-ld): .*(?:error|undefined)|undefined reference to"
)
_OTHER_ERROR = re.compile(
    r"^(?:\*\*\* |ERROR: |Error: |\S+: error: )"
    r"|: No space left on device|: not found$|: command not found$"
)
_MAKE_ERROR = re.compile(r"^(?:g?make(?:\[\d+\])?: )\*\*\* ")
_WARNING = re.compile(r": warning: ")

MAX_ERRORS = 5


def first_errors(text: str, limit: int = MAX_ERRORS) -> list[str]:
    """The first compiler/linker error lines (file:line first), else other
    error lines, else make's ``***`` lines."""
    lines = text.splitlines()
    for pattern in (_COMPILER_ERROR, _LINKER_ERROR, _OTHER_ERROR, _MAKE_ERROR):
        found = [ln.strip() for ln in lines if pattern.search(ln)]
        if found:
            return found[:limit]
    return []


def count_warnings(text: str) -> int:
    return sum(1 for ln in text.splitlines() if _WARNING.search(ln))


def tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def read_slice(path: Path, start: int, end: int | None = None) -> str:
    """The text of *path* from byte *start* to *end* (default: its end); a log
    is read in slices so that each target sees only what it wrote."""
    with path.open("rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(max(0, end - start))
        return data.decode(errors="replace")
