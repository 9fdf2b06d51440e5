"""Typed fakes for unit tests: a Runtime that records commands and imitates
just enough of Kbuild (writes .config, merges fragments, creates images)."""

from __future__ import annotations

import contextlib
import errno
import http.server
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pytest_kbuild.build import probes
from pytest_kbuild.kconfig import parse_config
from pytest_kbuild.runtime.base import Workspace


def render_config(options: Mapping[str, str | None]) -> str:
    """.config text for *options* (None: ``# CONFIG_X is not set``)."""
    lines = []
    for sym, val in options.items():
        lines.append(f"# {sym} is not set" if val is None else f"{sym}={val}")
    return "\n".join(lines) + "\n"


@dataclass
class Call:
    """One command the fake ran."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]

    @property
    def goal(self) -> str:
        return goal_of(self.argv)


def unwrap(argv: Sequence[str]) -> list[str]:
    """The command inside a jobserver wrapper (sh -c SCRIPT sh FIFO make ...)."""
    if list(argv[:2]) == ["sh", "-c"] and len(argv) > 5 and argv[5] == "make":
        return list(argv[5:])
    return list(argv)


def goal_of(argv: Sequence[str]) -> str:
    """The make goal of a make command (first word that is neither an
    option nor VAR=value), else the basename of the program."""
    argv = unwrap(argv)
    if argv[0] == "make":
        for arg in argv[1:]:
            if not arg.startswith("-") and "=" not in arg:
                return arg
        return ""
    return os.path.basename(argv[0])


def make_dir(argv: Sequence[str]) -> Path:
    """The O= build directory of a make command."""
    for arg in argv:
        if arg.startswith("O="):
            return Path(arg[2:])
    raise AssertionError(f"make without O=: {argv}")


@dataclass
class FakeRuntime:
    """Implements pytest_kbuild.runtime.base.Runtime without running anything.

    - ``missing``: tools ``which`` does not find.
    - ``exit_codes`` / ``outputs``: per goal (see goal_of) exit status and log text.
    - ``interrupt``: goals that raise KeyboardInterrupt (Ctrl-C during the command).
    - ``hang``: goals that run past any timeout (raise subprocess.TimeoutExpired).
    - ``enospc``: goals whose run raises OSError(ENOSPC).
    - ``config``: what ``make <x>config`` writes to .config.
    - ``olddefconfig``: options ``make olddefconfig`` forces (None: not set),
      as Kconfig does with options whose dependencies are not met.
    - ``produces``: goal -> files (relative to O=) a successful make creates.
    - ``no_artifacts``: goals that succeed without creating their files.
    - ``capture_outputs``: ``capture`` results by shlex-joined argv or by program;
      unscripted ``X --version`` answers ``X (Fake 1.0) 1.0.0``, anything else fails.
    """

    name: str = "fake"
    missing: set[str] = field(default_factory=set)
    exit_codes: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    interrupt: set[str] = field(default_factory=set)
    hang: set[str] = field(default_factory=set)
    timeouts: list[float | None] = field(default_factory=list)
    enospc: set[str] = field(default_factory=set)
    config: dict[str, str | None] = field(
        default_factory=lambda: {"CONFIG_64BIT": "y", "CONFIG_MODULES": None}
    )
    olddefconfig: dict[str, str | None] = field(default_factory=dict)
    produces: dict[str, list[str]] = field(
        default_factory=lambda: {
            "bzImage": ["arch/x86/boot/bzImage"],
            "vmlinux": ["vmlinux", "System.map"],
        }
    )
    no_artifacts: set[str] = field(default_factory=set)
    capture_outputs: dict[str, tuple[int, str]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    captures: list[list[str]] = field(default_factory=list)
    on_run: Callable[[Call], None] | None = None
    workspaces: list[Workspace] = field(default_factory=list)

    # -- Runtime protocol --------------------------------------------------------
    def bind(self, workspace: Workspace) -> FakeRuntime:
        self.workspaces.append(workspace)
        return self

    def reproducer_args(self) -> list[str]:
        return [f"--runtime={self.name}"]

    def which(self, tool: str) -> str | None:
        return None if tool in self.missing else f"/usr/bin/{tool}"

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output: BinaryIO,
        timeout: float | None = None,
    ) -> int:
        call = Call(list(argv), cwd, dict(env))
        self.calls.append(call)
        if self.on_run is not None:
            self.on_run(call)
        goal = call.goal
        if goal in self.interrupt:
            raise KeyboardInterrupt
        if goal in self.hang:
            self.timeouts.append(timeout)
            raise subprocess.TimeoutExpired(call.argv, timeout or 0)
        if goal in self.enospc:
            raise OSError(errno.ENOSPC, "No space left on device")
        if goal in self.outputs:
            output.write(self.outputs[goal].encode())
        rc = self.exit_codes.get(goal, 0)
        if rc == 0 and goal not in self.no_artifacts:
            self._effects(call)
        return rc

    def capture(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
        if list(argv[:3]) == ["sh", "-c", probes.SCRIPT]:
            # probes.run's batch: each command as if captured on its own
            out = ""
            for command in argv[4:]:
                rc, text = self.capture(shlex.split(command), cwd=cwd, env=env)
                out += f"\n{probes.MARK}\n{text}\n{probes.MARK}-rc {rc}\n"
            return 0, out
        self.captures.append(list(argv))
        for key in (shlex.join(argv), argv[0]):
            if key in self.capture_outputs:
                return self.capture_outputs[key]
        if argv[-1] == "--version":
            return 0, f"{argv[0]} (Fake 1.0) 1.0.0\nCopyright\n"
        return 1, f"{argv[0]}: not scripted\n"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    # -- helpers -------------------------------------------------------------------
    @property
    def goals(self) -> list[str]:
        return [c.goal for c in self.calls]

    def _effects(self, call: Call) -> None:
        argv, goal = unwrap(call.argv), call.goal
        if argv[0] == "make":
            out = make_dir(argv)
            config = out / ".config"
            if goal == "olddefconfig":
                options = parse_config(config.read_text())
                options.update(self.olddefconfig)
                config.write_text(render_config(options))
            elif goal.endswith("config"):
                config.write_text(render_config(self.config))
            for rel in self.produces.get(goal, []):
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                (out / rel).write_text(f"{goal} output\n")
        elif goal == "merge_config.sh":
            # merge_config.sh -m -O DIR BASE FRAGMENT...
            base, fragments = Path(argv[4]), argv[5:]
            options = parse_config(base.read_text())
            for frag in fragments:
                options.update(parse_config(Path(frag).read_text()))
            (Path(argv[3]) / ".config").write_text(render_config(options))
        elif goal == "tar":
            Path(argv[2]).write_text("tar\n")
        elif goal == "xz":
            Path(argv[-1] + ".xz").write_text("xz\n")


MAKEFILE = """\
# SPDX-License-Identifier: GPL-2.0
VERSION = 6
PATCHLEVEL = 8
SUBLEVEL = 0
EXTRAVERSION = -rc3
NAME = Fake Kernel
"""


def make_tree(path: Path, makefile: str = MAKEFILE) -> Path:
    """A directory that passes the kernel-tree check (Makefile, Kconfig, Kbuild)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "Makefile").write_text(makefile)
    (path / "Kconfig").write_text('mainmenu "Fake"\n')
    (path / "Kbuild").write_text("# empty\n")
    return path


# -- a local HTTP server (127.0.0.1 only) -----------------------------------------------------


@contextlib.contextmanager
def http_server(routes: Mapping[str, Callable[[Any], None]]) -> Iterator[str]:
    """Serve *routes* (path -> function of the request handler) on
    127.0.0.1 in a thread; yields ``http://127.0.0.1:PORT``; 404 elsewhere.
    The server stops when the block ends, even if a handler still sleeps."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            route = routes.get(self.path)
            try:
                if route is None:
                    self.send_error(404)
                else:
                    route(self)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (deadline, size cap)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def send(handler: Any, body: bytes, status: int = 200, **headers: str) -> None:
    """Answer a request of http_server with *body*."""
    handler.send_response(status)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)
