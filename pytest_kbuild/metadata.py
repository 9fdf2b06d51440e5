"""Where and from what a build was made: the tree (kernelversion, git), the
host, timestamps. Facts for metadata.json."""

from __future__ import annotations

import datetime
import os
import platform
import re
from pathlib import Path
from typing import Any

from .runtime.base import Runtime


def tree_info(tree: Path, runtime: Runtime) -> dict[str, Any]:
    """Kernel version from the top Makefile, and git describe/commit if a git tree."""
    info: dict[str, Any] = {"path": str(tree), "kernelversion": kernelversion(tree)}
    if (tree / ".git").exists():
        rc, describe = runtime.capture(
            ["git", "-C", str(tree), "describe", "--always", "--dirty"], cwd=tree, env={}
        )
        rc2, commit = runtime.capture(
            ["git", "-C", str(tree), "rev-parse", "HEAD"], cwd=tree, env={}
        )
        info["git"] = {
            "describe": describe.strip() if rc == 0 else None,
            "commit": commit.strip() if rc2 == 0 else None,
        }
    return info


def kernelversion(tree: Path) -> str | None:
    """VERSION.PATCHLEVEL.SUBLEVEL[EXTRAVERSION] as ``make kernelversion`` prints it."""
    try:
        head = (tree / "Makefile").read_text(errors="replace")[:4096]
    except OSError:
        return None
    fields: dict[str, str] = dict(
        re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)[ \t]*=[ \t]*(\S*)", head, re.M)
    )
    if "VERSION" not in fields:
        return None
    version = ".".join(fields.get(k, "0") or "0" for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL"))
    return version + fields.get("EXTRAVERSION", "")


def host_info() -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "machine": platform.machine(),
        "os": _os_release(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def _os_release() -> str | None:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return None
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)', text, re.M)
    return m.group(1) if m else None


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
