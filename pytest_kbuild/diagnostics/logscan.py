"""Read a slice of a log and its last lines (diagnostics/ reads what the
tools said in it)."""

from __future__ import annotations

from pathlib import Path


def tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


def read_slice(path: Path, start: int, end: int | None = None) -> str:
    """The text of *path* from byte *start* to *end* (default: its end); a log
    is read in slices so that each target sees only what it wrote."""
    with path.open("rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(max(0, end - start))
        return data.decode(errors="replace")
