"""Runtime registry: name -> factory. Plugins add runtimes through the
``pytest_kbuild_make_runtime`` hook; this registry holds the built-in ones."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import KbuildUserError, UnknownRuntime
from .base import Runtime, Workspace
from .container import ContainerOptions, ContainerRuntime
from .docker import DockerRuntime
from .local import LocalRuntime
from .podman import PodmanRuntime

RUNTIMES: dict[str, Callable[[ContainerOptions], Runtime]] = {
    "local": lambda options: LocalRuntime(),
    "null": lambda options: LocalRuntime(),
    "podman": PodmanRuntime,
    "docker": DockerRuntime,
}
CONTAINER_RUNTIMES = ("podman", "docker")


def available() -> list[str]:
    return sorted(RUNTIMES)


def make(name: str, where: str = "", options: ContainerOptions | None = None) -> Runtime:
    """A new runtime called *name*; raises UnknownRuntime."""
    options = options or ContainerOptions()
    try:
        factory = RUNTIMES[name or "local"]
    except KeyError:
        raise UnknownRuntime(name, RUNTIMES, where) from None
    if options.image and name not in CONTAINER_RUNTIMES:
        raise KbuildUserError(
            f"image {options.image!r} needs a container runtime, not {name or 'local'!r}; "
            f"accepted: {', '.join(CONTAINER_RUNTIMES)}"
        )
    return factory(options)


__all__ = [
    "Runtime",
    "Workspace",
    "LocalRuntime",
    "ContainerOptions",
    "ContainerRuntime",
    "PodmanRuntime",
    "DockerRuntime",
    "RUNTIMES",
    "CONTAINER_RUNTIMES",
    "available",
    "make",
]
