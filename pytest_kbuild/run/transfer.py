"""Bringing a remote xdist worker's results home: the files of a finished
build's results folder as plain data that rides on a pytest report, and
writing them into the controller's results dir.

No pytest import: plugin/xdist.py attaches the data to reports and hands it back.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import KbuildInfraError
from ..results import BUILD_LOG, METADATA, REPRODUCER

# A file larger than this stays on the worker (named in the data's "left"):
# reports go through one execnet channel, in memory, base64-encoded.
MAX_FILE_BYTES = 64 << 20
ALWAYS = (BUILD_LOG, METADATA)  # sent whatever their size: without them a result is blind


def pack(results: Path, folder: Path, max_bytes: int = MAX_FILE_BYTES) -> dict[str, Any]:
    """The files of *folder* (a build's folder under *results*) as
    ``{"folder": "<matrix>/<build id>", "files": {name: base64}, "left": {name: size}}``."""
    files: dict[str, str] = {}
    left: dict[str, int] = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        size = path.stat().st_size
        if size > max_bytes and path.name not in ALWAYS:
            left[path.name] = size
            continue
        files[path.name] = base64.b64encode(path.read_bytes()).decode("ascii")
    rel = folder.relative_to(results).as_posix()
    return {"folder": rel, "files": files, "left": left}


def unpack(data: Mapping[str, Any], results: Path) -> Path:
    """Write the files of pack()'s *data* into *results*; return the build's
    folder there. Files are overwritten as a local build overwrites them."""
    rel = PurePosixPath(data["folder"])
    if rel.is_absolute() or ".." in rel.parts or len(rel.parts) != 2:
        raise KbuildInfraError(f"remote worker sent results for a bad folder {str(rel)!r}")
    folder = results.joinpath(*rel.parts)
    folder.mkdir(parents=True, exist_ok=True)
    for name, b64 in data["files"].items():
        if "/" in name or name in ("", ".", ".."):
            raise KbuildInfraError(f"remote worker sent a bad file name {name!r}")
        (folder / name).write_bytes(base64.b64decode(b64))
        if name == REPRODUCER:
            (folder / name).chmod(0o755)  # as the worker wrote it
    return folder
