"""The one-line ``kbuild`` command that repeats a build, derived from the
declarations of BuildSpec's and BuildOptions' fields (their kbuild
spellings), so that a new field needs no edit here."""

from __future__ import annotations

import shlex
from pathlib import Path

from . import kconfig, spec
from .options import BuildOptions, reproducer_args


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
