"""The local runtime: toolchains installed on this host."""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, cast

from ..errors import KbuildInfraError
from .base import Workspace

# How long a stopped command gets between SIGTERM and SIGKILL.
STOP_GRACE_SECONDS = 5.0


class LocalRuntime:
    """Runs build commands directly, each in its own process group."""

    name = "local"

    def __init__(self, base_env: Mapping[str, str] | None = None) -> None:
        self._base_env = dict(os.environ if base_env is None else base_env)

    def _env(self, env: Mapping[str, str]) -> dict[str, str]:
        return {**self._base_env, **env}

    def bind(self, workspace: Workspace) -> LocalRuntime:
        return self

    def reproducer_args(self) -> list[str]:
        return [f"--runtime={self.name}"]

    def which(self, tool: str) -> str | None:
        return shutil.which(tool, path=self._base_env.get("PATH"))

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output: BinaryIO,
        timeout: float | None = None,
    ) -> int:
        if not Path(cwd).is_dir():
            raise KbuildInfraError(
                f"cannot run {argv[0]!r}: working directory {str(cwd)!r} does not exist"
            )
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=self._env(env),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except FileNotFoundError:
            output.write(f"{argv[0]}: command not found\n".encode())
            return 127
        except OSError as err:
            raise KbuildInfraError(f"cannot run {argv[0]!r}: {err}") from None
        try:
            return proc.wait(timeout=timeout)
        except BaseException:
            _stop(proc)
            raise

    def capture(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
        try:
            done = subprocess.run(
                list(argv),
                cwd=cwd,
                env=self._env(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return 127, str(err)
        return done.returncode, done.stdout.decode(errors="replace")

    def interactive(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        """The host command and environment that run *argv* attached to the
        terminal (kbuild --shell)."""
        return list(argv), self._env(env)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "host": platform.node(), "machine": platform.machine()}


def _prctl() -> Callable[..., int] | None:
    try:
        return cast(Callable[..., int], ctypes.CDLL(None, use_errno=True).prctl)
    except (OSError, AttributeError):  # not Linux
        return None


_PRCTL = _prctl()  # resolved here: the child of a fork only calls it
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the process that started it
    dies (Linux's parent-death signal; make passes SIGTERM on to its jobs).
    A build runs in a session of its own, so without it an xdist worker or
    kbuild killed with SIGKILL left make building as an orphan."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the command's whole process group (make and its children)."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_SECONDS), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
