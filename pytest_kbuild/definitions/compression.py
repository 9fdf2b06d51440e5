"""How -z/--compression packs the artifacts that are compressed (vmlinux and
the modules, dtbs and headers tarballs): the file suffix, the command that
compresses one file (keeping it), and the tool it needs. A target's data
file says ``{z}`` for the suffix (``modules.tar{z}``; tar picks the
compressor from it) and ``{compress}`` for the command (dropped with none)."""

from __future__ import annotations

from dataclasses import dataclass

from ..parsers import COMPRESSIONS


@dataclass(frozen=True)
class Compression:
    """One compression: its name, suffix, command and tool (with its Debian package)."""

    name: str
    suffix: str
    command: tuple[str, ...]
    tool: str = ""
    package: str = ""


_KNOWN = {
    # One xz thread: multi-threaded xz writes other blocks (reproducible builds).
    "xz": Compression("xz", ".xz", ("xz", "-T1", "--keep", "--force"), "xz", "xz-utils"),
    "zstd": Compression("zstd", ".zst", ("zstd", "-q", "--keep", "--force"), "zstd", "zstd"),
    "none": Compression("none", "", ()),
}
assert set(_KNOWN) == set(COMPRESSIONS)


def get(name: str) -> Compression:
    """The compression called *name* (one of parsers.COMPRESSIONS)."""
    return _KNOWN[name]
