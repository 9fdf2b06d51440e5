"""Runtime registry: name -> factory. Plugins add runtimes through the
``pytest_kbuild_make_runtime`` hook; this registry holds the built-in ones."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UnknownRuntime
from .base import Runtime
from .local import LocalRuntime

RUNTIMES: dict[str, Callable[[], Runtime]] = {"local": LocalRuntime, "null": LocalRuntime}


def available() -> list[str]:
    return sorted(RUNTIMES)


def make(name: str, where: str = "") -> Runtime:
    """A new runtime called *name*; raises UnknownRuntime."""
    try:
        factory = RUNTIMES[name or "local"]
    except KeyError:
        raise UnknownRuntime(name, RUNTIMES, where) from None
    return factory()


__all__ = ["Runtime", "LocalRuntime", "RUNTIMES", "available", "make"]
