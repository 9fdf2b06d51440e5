"""The interface every runtime (local, podman, docker) implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable


@runtime_checkable
class Runtime(Protocol):
    """Runs the commands of a build somewhere: on this host or in a container."""

    name: str

    def which(self, tool: str) -> str | None:
        """Where *tool* is on the runtime's PATH, or None."""

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output: BinaryIO,
    ) -> int:
        """Run *argv* in *cwd* with *env* added, stdout+stderr to *output*;
        return the exit status. Ctrl-C stops the command, then propagates."""

    def capture(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
        """Run a short command and return (status, stdout+stderr text)."""

    def describe(self) -> dict[str, Any]:
        """Facts for metadata.json (name, version, image...)."""
