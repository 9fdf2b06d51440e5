"""Runtime registry: name -> factory. Plugins add runtimes through the
``pytest_kbuild_make_runtime`` hook; this registry holds the built-in ones."""

from __future__ import annotations

from collections.abc import Callable, Iterator

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


class Registry:
    """The runtime names a build may use: the built-in ones, and every name a
    plugin's ``pytest_kbuild_make_runtime`` answers (*ask* says whether it
    does), so that a matrix, ``--kbuild-runtime`` and kbuild accept the same."""

    def __init__(self, ask: Callable[[str], bool] | None = None) -> None:
        self._ask = ask
        self._provided: set[str] = set()

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in RUNTIMES or name in self._provided:
            return True
        if self._ask is not None and self._ask(name):
            self._provided.add(name)
            return True
        return False

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*RUNTIMES, *self._provided}))

    def __len__(self) -> int:
        return len({*RUNTIMES, *self._provided})


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
    "Registry",
    "available",
    "make",
]
