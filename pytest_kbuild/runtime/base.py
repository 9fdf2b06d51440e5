"""The interface every runtime (local, podman, docker) implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable


@dataclass(frozen=True)
class Workspace:
    """What one build needs from a runtime: which toolchain for which arch,
    and the host directories its commands read and write. *toolchain_dir*
    is the directory of a toolchain from a directory (``llvm@DIR``), read
    at its own path."""

    arch: str
    toolchain: str
    tree: Path
    build_dir: Path
    cache_dir: Path | None = None
    jobserver: Path | None = None
    toolchain_dir: Path | None = None


@runtime_checkable
class Runtime(Protocol):
    """Runs the commands of a build somewhere: on this host or in a container.

    ``bind`` gives the runtime for one build (a container runtime picks the
    image for the workspace's arch and toolchain and mounts its directories);
    ``run``, ``capture`` and ``which`` are called on what ``bind`` returned.
    Paths in commands are host paths; a runtime that runs elsewhere maps them.
    """

    name: str

    def bind(self, workspace: Workspace) -> Runtime:
        """The runtime for one build in *workspace*; raises KbuildInfraError
        when it cannot run there (e.g. the image is missing)."""

    def which(self, tool: str) -> str | None:
        """Where *tool* is on the runtime's PATH, or None."""

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output: BinaryIO,
        timeout: float | None = None,
    ) -> int:
        """Run *argv* in *cwd* with *env* added, stdout+stderr to *output*;
        return the exit status. Ctrl-C stops the command, then propagates;
        after *timeout* seconds the command is stopped and
        subprocess.TimeoutExpired raised."""

    def capture(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
        """Run a short command and return (status, stdout+stderr text)."""

    def describe(self) -> dict[str, Any]:
        """Facts for metadata.json (name, version, image...)."""

    def reproducer_args(self) -> list[str]:
        """``kbuild`` options that select this runtime again (--runtime, --image...)."""


def guest_paths(runtime: Runtime) -> tuple[str, ...]:
    """Where a runtime that runs commands elsewhere (a container) has the
    tree and the build dir, as its tools print them: a runtime's optional
    ``guest_paths`` (none for one that runs on this host)."""
    return tuple(getattr(runtime, "guest_paths", ()))
