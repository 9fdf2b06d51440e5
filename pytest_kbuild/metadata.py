"""metadata.json: where and from what a build was made (the tree's
kernelversion and git state, the host, the compiler the runtime has,
timestamps), each target's result, and writing the file."""

from __future__ import annotations

import datetime
import os
import platform
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import KbuildInfraError
from .results import TargetResult, write_json
from .runtime.base import Runtime


def runtime_facts(runtime: Runtime, tree: Path, toolchain: Mapping[str, Any]) -> dict[str, Any]:
    """Facts only the bound runtime knows: the compiler's version as the build
    sees it (in a copy of the *toolchain* entry), the runtime, the tree's git state."""
    toolchain = dict(toolchain)
    rc, version = runtime.capture([toolchain["compiler"], "--version"], cwd=tree, env={})
    toolchain["version"] = version.splitlines()[0] if rc == 0 and version else None
    return {
        "toolchain": toolchain,
        "runtime": runtime.describe(),
        "tree": tree_info(tree, runtime),
    }


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


def record_target(data: dict[str, Any], result: TargetResult) -> None:
    """Put *result* and its artifacts into the metadata *data*."""
    data["targets"][result.name] = result.to_json()
    for a in result.artifacts:
        data["artifacts"][a.name] = {"size": a.size, "sha256": a.sha256, "target": result.name}


def write_metadata(path: Path, data: Mapping[str, Any]) -> None:
    """Write *data* to *path*. A file that cannot be written is an
    infrastructure error (KbuildInfraError): the item errors with this
    message, not an OSError traceback."""
    try:
        write_json(path, data)
    except OSError as err:
        raise KbuildInfraError(f"cannot write {path}: {err.strerror}") from None
