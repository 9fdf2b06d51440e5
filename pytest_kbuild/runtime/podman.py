"""The podman runtime: each step in a podman container (rootful or rootless)."""

from __future__ import annotations

import os

from .container import ContainerRuntime


class PodmanRuntime(ContainerRuntime):
    name = "podman"
    engine = "podman"

    def user_args(self) -> list[str]:
        # Rootless podman maps the caller to root in the container unless
        # asked to keep the caller's uid; rootful podman takes --user.
        if os.getuid() != 0:
            return ["--userns=keep-id"]
        return super().user_args()

    def remove_args(self, name: str) -> list[str]:
        return [self.engine, "rm", "--force", "--time", "0", name]

    def version_args(self) -> list[str]:
        return [self.engine, "version", "--format", "{{.Client.Version}}"]
