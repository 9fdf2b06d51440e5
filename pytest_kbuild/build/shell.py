"""kbuild --shell: an interactive shell where the build's make runs, on the
same runtime (the container, its image and mounts), in the tree, with the
build's environment, its build dir as KBUILD_OUTPUT and its make variables
in MAKEFLAGS, so that a plain ``make`` there is the build's make."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..errors import KbuildInfraError
from ..runtime.base import Runtime


def makeflags(makevars: Mapping[str, str], jobs: int | None) -> str:
    """MAKEFLAGS that give make *makevars* as command-line variables (they win
    over the Makefile's own assignments, as on make's command line)."""

    def quoted(text: str) -> str:
        return text.replace("\\", "\\\\").replace(" ", "\\ ")

    flags = [f"-j{jobs}"] if jobs else []
    return " ".join([*flags, "--", *(quoted(f"{k}={v}") for k, v in makevars.items())])


def environment(
    env: Mapping[str, str], makevars: Mapping[str, str], build_dir: Path, jobs: int | None
) -> dict[str, str]:
    """The shell's variables: the build's *env*, its make variables (also as
    plain variables: $CC, $ARCH), KBUILD_OUTPUT and MAKEFLAGS."""
    return {
        **makevars,
        **env,
        "KBUILD_OUTPUT": str(build_dir),
        "MAKEFLAGS": makeflags(makevars, jobs),
    }


def run(rt: Runtime, tree: Path, env: Mapping[str, str]) -> int:
    """Run an interactive shell (bash, else sh) on *rt* in *tree*; its exit status."""
    interactive = getattr(rt, "interactive", None)
    if interactive is None:
        raise KbuildInfraError(f"runtime {rt.name} cannot open a shell (it has no interactive())")
    program = "bash" if rt.which("bash") else "sh"
    argv, host_env = interactive([program], cwd=tree, env=env)
    try:
        return subprocess.run(argv, cwd=tree, env=host_env, check=False).returncode
    except OSError as err:
        raise KbuildInfraError(f"cannot run {argv[0]!r} for the shell: {err}") from None
