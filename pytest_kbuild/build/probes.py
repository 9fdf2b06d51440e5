"""Cheap facts for a build's record. Before it runs: the versions of the
tools it uses and the tree's git state, asked of the runtime in ONE call (a
container starts once, not once per tool). After it ran: kernelrelease,
vmlinux's text/data/bss, System.map's _text address, the module list, the
machine. Every probe answers None when it cannot tell; none raises."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..definitions.toolchain import redact
from ..runtime.base import Runtime

# `sh -c SCRIPT sh CMD...`: each CMD (a shell-quoted command line) runs in
# turn; its output follows a MARK line and a MARK_RC line gives its status.
MARK = "@@kbuild-probe"
SCRIPT = (
    f'for p; do printf "\\n{MARK}\\n"; sh -c "$p" </dev/null 2>&1; '
    f'printf "\\n{MARK}-rc %s\\n" "$?"; done'
)

# git probe -> command, run in the tree; None when not a git tree or when git fails.
GIT = {
    "commit": ["git", "rev-parse", "HEAD"],
    "describe": ["git", "describe", "--always", "--dirty"],
    "describe_tags": ["git", "describe", "--tags"],
    "branch": ["git", "symbolic-ref", "--short", "-q", "HEAD"],
    "remote_url": ["git", "remote", "get-url", "origin"],
}
# The probe of the tree's minimum compiler version (tool_commands' key):
# recorded in the toolchain entry, not among the tools.
MINIMUM = "compiler_minimum"
MIN_TOOL_SCRIPT = "scripts/min-tool-version.sh"
# Tools whose version is not `TOOL --version`.
_VERSION_ARGS = {"openssl": ["version"], "mkimage": ["-V"]}


def run(rt: Runtime, commands: Mapping[str, list[str]], cwd: Path) -> dict[str, str | None]:
    """Run every command of *commands* (key -> argv) in one runtime call in
    *cwd*: key -> its output (stripped), None when it failed."""
    if not commands:
        return {}
    keys = list(commands)
    argv = ["sh", "-c", SCRIPT, "sh", *(shlex.join(commands[k]) for k in keys)]
    try:
        _, out = rt.capture(argv, cwd=cwd, env={})
    except OSError:
        out = ""
    return dict(zip(keys, parse(out, len(keys)), strict=True))


def parse(out: str, count: int) -> list[str | None]:
    """The *count* answers in *out*, the output of SCRIPT."""
    answers: list[str | None] = []
    for chunk in out.split(f"\n{MARK}\n")[1:]:
        body, _, rc = chunk.rpartition(f"\n{MARK}-rc ")
        answers.append(body.strip() if rc.strip() == "0" else None)
    return (answers + [None] * count)[:count]


def first_line(text: str | None) -> str | None:
    """The first non-empty line of a ``--version`` answer."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return None


def llvm_tool(makevars: Mapping[str, str], tool: str) -> str | None:
    """LLVM's *tool* as Kbuild names it with LLVM=: DIR/tool for LLVM=DIR/,
    tool-N for LLVM=-N, tool for LLVM=1; None without LLVM=."""
    llvm = makevars.get("LLVM")
    if not llvm:
        return None
    if llvm.endswith("/"):
        return llvm + tool
    return tool + (llvm if llvm.startswith("-") else "")


def linker(makevars: Mapping[str, str]) -> str:
    """The linker make uses: LD, else LLVM's ld.lld, else $(CROSS_COMPILE)ld."""
    if makevars.get("LD"):
        return makevars["LD"]
    return llvm_tool(makevars, "ld.lld") or makevars.get("CROSS_COMPILE", "") + "ld"


def size_tool(makevars: Mapping[str, str]) -> str:
    """The toolchain's size: LLVM's llvm-size with LLVM=, else $(CROSS_COMPILE)size."""
    return llvm_tool(makevars, "llvm-size") or makevars.get("CROSS_COMPILE", "") + "size"


def tool_commands(
    compiler: str,
    makevars: Mapping[str, str],
    host_tools: Iterable[str],
    minimum: list[str] | None = None,
) -> dict[str, list[str]]:
    """Key -> version command for make, the compiler, the linker and
    *host_tools*; and *minimum*, the command that prints the tree's minimum
    version of the compiler (MINIMUM), when there is one."""
    tools = {"make": "make", "compiler": compiler, "ld": linker(makevars)}
    tools.update({t: t for t in sorted(host_tools) if t not in tools})
    commands = {k: [t, *_VERSION_ARGS.get(t, ["--version"])] for k, t in tools.items()}
    if minimum:
        commands[MINIMUM] = minimum
    return commands


def minimum_command(tree: Path, tool: str, srcarch: str) -> list[str] | None:
    """What prints the minimum version of *tool* (``gcc``, ``llvm``) that
    *tree* accepts: its scripts/min-tool-version.sh (which reads SRCARCH),
    None when the tree has none (before Linux 5.15) or *tool* is empty."""
    if not tool or not (tree / MIN_TOOL_SCRIPT).is_file():
        return None
    return ["env", f"SRCARCH={srcarch}", "sh", MIN_TOOL_SCRIPT, tool]


def versions(answers: Mapping[str, str | None], keys: Iterable[str]) -> dict[str, str | None]:
    """Key -> the first line of its version answer."""
    return {k: first_line(answers.get(k)) for k in keys}


def git_state(answers: Mapping[str, str | None]) -> dict[str, str | None]:
    """The tree's git facts from the GIT answers (all None outside a git tree)."""
    out = {k: (answers.get(f"git.{k}") or None) for k in GIT}
    if out["remote_url"]:
        out["remote_url"] = redact(out["remote_url"])  # a CI clone URL may hold a token
    return out


def kernelrelease(build_dir: Path | None) -> str | None:
    """What ``make kernelrelease`` prints, from include/config/kernel.release
    (written by every target after config)."""
    if build_dir is None:
        return None
    try:
        text = (build_dir / "include/config/kernel.release").read_text().strip()
    except OSError:
        return None
    return text or None


# A release as make prints it (6.1.0, 6.8.0-rc3-tiny+): never make's own messages.
_RELEASE = re.compile(r"^[0-9]+\.[0-9]+\S*$")


def make_kernelrelease(
    rt: Runtime, argv: Sequence[str], tree: Path, env: Mapping[str, str]
) -> str | None:
    """What *argv* (``make -s ... kernelrelease`` with the build's ARCH, O=
    and variables) prints: the release of a build that stopped after its
    config, before any target wrote include/config/kernel.release."""
    rc, out = rt.capture(list(argv), cwd=tree, env=env)
    if rc != 0:
        return None
    lines = [line.strip() for line in out.splitlines() if _RELEASE.match(line.strip())]
    return lines[-1] if lines else None


def vmlinux_size(rt: Runtime, build_dir: Path, tool: str) -> dict[str, int | None]:
    """text, data and bss of *build_dir*/vmlinux as the toolchain's *tool* counts them."""
    rc, out = rt.capture([tool, "vmlinux"], cwd=build_dir, env={})
    m = re.search(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+[0-9a-f]+\s+\S*vmlinux\s*$", out, re.M)
    if rc != 0 or m is None:
        return dict.fromkeys(("text", "data", "bss"))
    return {"text": int(m.group(1)), "data": int(m.group(2)), "bss": int(m.group(3))}


def text_offset(system_map: Path) -> str | None:
    """The address of _text in *system_map* (where the kernel's text starts)."""
    try:
        with system_map.open(errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "_text":
                    return "0x" + parts[0]
    except OSError:
        return None
    return None


def modules(build_dir: Path) -> list[str] | None:
    """The modules built, from modules.order (their paths without .ko/.o),
    None when make did not write one (no modules target, no CONFIG_MODULES)."""
    try:
        lines = (build_dir / "modules.order").read_text().split()
    except OSError:
        return None
    return [re.sub(r"\.(ko|o)$", "", line) for line in lines]


def hardware(build_dir: Path | None) -> dict[str, Any]:
    """Cores, memory and the free space where the build dir is."""
    try:
        cores: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count()
    ram = None
    try:
        m = re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.M)
        ram = int(m.group(1)) * 1024 if m else None
    except OSError:
        pass
    free = None
    if build_dir is not None:
        with contextlib.suppress(OSError):
            free = shutil.disk_usage(build_dir).free
    return {"cores": cores, "ram_bytes": ram, "build_dir_free_bytes": free}
