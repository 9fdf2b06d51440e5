"""The docker runtime: each step in a docker container, as the caller's uid."""

from __future__ import annotations

from .container import ContainerRuntime


class DockerRuntime(ContainerRuntime):
    name = "docker"
    engine = "docker"
