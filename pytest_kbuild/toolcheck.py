"""Before a build runs: is every tool it needs on the runtime's PATH?
A missing one is a ToolNotFound that says what to install, and where."""

from __future__ import annotations

from .arch import Arch
from .errors import ToolNotFound
from .runtime.base import Runtime
from .toolchain import Toolchain, Wrapper


def check_tools(rt: Runtime, arch: Arch, toolchain: Toolchain, wrapper: Wrapper) -> None:
    """Raise ToolNotFound for the first of make, the compiler, the arch's
    host tools and the wrapper that *rt* cannot find."""
    wanted: list[tuple[str, str, list[str]]] = [
        ("make", "GNU make", ["make"]),
        (
            toolchain.compiler(arch),
            f"toolchain {toolchain.name} for {arch.name}",
            toolchain.debian_packages(arch),
        ),
    ]
    wanted += [(t, f"arch {arch.name}", [p]) for t, p in arch.host_tools.items()]
    if wrapper.command:
        wanted.append((wrapper.command, f"wrapper {wrapper.name}", list(wrapper.debian_packages)))
    for tool, what, packages in wanted:
        if rt.which(tool) is None:
            raise ToolNotFound(tool, f"{what} (runtime {rt.name})", install_hint(rt, packages))


def install_hint(rt: Runtime, packages: list[str]) -> str:
    """How to get *packages* where *rt* looks: on this host, or into the image."""
    if not packages:
        return ""
    image = rt.describe().get("image")
    if isinstance(image, dict) and image.get("reference"):
        return (
            f"the image {image['reference']} lacks it: add the Debian packages "
            f"{' '.join(packages)} to it (see pytest-kbuild images build/check)"
        )
    return f"on Debian install: {' '.join(packages)}"
