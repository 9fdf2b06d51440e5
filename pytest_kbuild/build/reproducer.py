"""The one-line ``kbuild`` command that repeats a build, derived from the
declarations of BuildSpec's and BuildOptions' fields (their kbuild
spellings), so that a new field needs no edit here."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from .. import kconfig, spec
from ..options import BuildOptions, reproducer_args
from ..results import REPRODUCER

if TYPE_CHECKING:
    from .make import MakeEnv


def line(tree: Path, what: spec.BuildSpec, options: BuildOptions, runtime: list[str]) -> str:
    """``kbuild --directory=TREE ...`` for *what*; *runtime* are the bound
    runtime's own arguments (``--runtime=podman --image=name@sha256:...``)."""
    argv = ["kbuild", f"--directory={tree}"]
    positional: list[str] = []
    for f in spec.kbuild_fields():
        value, flag = getattr(what, f.name), (f.metadata["kbuild"] or ("",))[-1]
        if f.name == "runtime":
            argv += runtime + reproducer_args(options)
        elif f.name in ("kconfig", "kconfig_add"):
            values = [value] if isinstance(value, str) else list(value)
            argv += [f"{flag}={kconfig.absolute(v, what.base_dir)}" for v in values]
        elif f.name == "targets":
            positional += list(value)
        elif f.metadata["positional"]:
            positional += [f"{k}={v}" for k, v in value]
        elif isinstance(value, tuple):
            argv += [f"{flag}={k}={v}" for k, v in value]
        else:
            argv.append(f"{flag}={value}")
    return shlex.join(argv + positional)


def write_script(path: Path, line: str, build_id: str) -> None:
    """*line* as an executable shell script at *path* (reproducer.sh)."""
    path.write_text(
        "#!/bin/sh\n"
        f"# Repeats build {build_id} with pytest-kbuild's kbuild command; the make\n"
        "# commands it ran are the '$ make' lines of build.log.\n"
        f"exec {line}\n"
    )
    os.chmod(path, 0o755)


def start_log(make: MakeEnv, line: str, compiler: str, stale: list[str]) -> None:
    """build.log's first lines: the reproducer and the compiler's version,
    as KernelCI reads them for a failed build too (and *stale*, the files of
    an earlier build removed); and the reproducer as reproducer.sh."""
    make.line(f"# to reproduce this build: {line}")
    make.line(f"# compiler: {compiler}")
    if stale:
        make.line(f"I: removed an earlier build's files from the output dir: {stale}")
    assert make.log is not None
    make.log.flush()  # a follower of build.log (kbuild -v) starts after these lines
    script = make.log_path.parent / REPRODUCER
    try:
        write_script(script, line, make.spec.id)
    except OSError as err:
        make.line(f"W: cannot write {REPRODUCER}: {err.strerror or err}")
