"""Show a growing file as it grows (kbuild -v: make's output live, while
build.log stays the record)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import BinaryIO


class Follower:
    """Copies what is appended to *path* to *out* every *interval* seconds,
    from *path*'s size when started, until stop()."""

    def __init__(self, path: Path, out: BinaryIO, interval: float = 0.2) -> None:
        self.path, self.out, self.interval = path, out, interval
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._offset = path.stat().st_size if path.exists() else 0
        self._thread = threading.Thread(target=self._loop, name="kbuild-follow", daemon=True)

    def __enter__(self) -> Follower:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Copy what is left, then end."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._copy()

    def flush(self) -> None:
        """Copy what was appended up to now (before a line of one's own)."""
        self._copy()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._copy()

    def _copy(self) -> None:
        with self._lock:
            self._copy_new()

    def _copy_new(self) -> None:
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return
        if data:
            self._offset += len(data)
            self.out.write(data)
            self.out.flush()
