"""What podman and docker share: run each build step in a fresh container
of one pinned image, with the tree read-only and the build dir read-write at
fixed paths (so two builds see the same paths: reproducible builds)."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import ImageNotFound, KbuildInfraError, KbuildUserError
from ..parsers import NETWORKS, PULL_POLICIES
from ..parsers import image_reference as image_reference  # moved down to parsers.py
from .base import Workspace

# Fixed paths inside every container: Kbuild embeds the source and build
# paths in some outputs, so they must not depend on the host.
GUEST_TREE = "/kbuild/src"
GUEST_BUILD = "/kbuild/build"
GUEST_CACHE = "/kbuild/cache"
GUEST_JOBSERVER = "/kbuild/jobserver"

DEFAULT_IMAGE = "localhost/kbuild/{arch}_{toolchain}"
CONTAINER_LABEL = "org.pytest-kbuild.build-dir"
TOOLS_LABEL = "org.pytest-kbuild.tools"
CAPTURE_TIMEOUT = 300
STOP_TIMEOUT = 30


@dataclass(frozen=True)
class ContainerOptions:
    """How to pick and run images: an image template, pull policy, network."""

    image: str | None = None
    pull: str = "missing"
    network: str = "none"

    def __post_init__(self) -> None:
        if self.pull not in PULL_POLICIES:
            raise KbuildUserError(
                f"pull policy {self.pull!r} is not known; accepted: {', '.join(PULL_POLICIES)}"
            )
        if self.network not in NETWORKS:
            raise KbuildUserError(
                f"network {self.network!r} is not known; accepted: {', '.join(NETWORKS)}"
            )
        if self.image is not None:
            image_reference(self.image, "x86_64", "gcc")  # placeholders are checked early


@dataclass(frozen=True)
class Image:
    """A local image: what was asked for and what it resolved to."""

    reference: str
    id: str
    repo_digest: str | None
    size: int
    labels: Mapping[str, str]

    def pinned(self) -> str:
        """A reference that names exactly this image: name@sha256:..."""
        name = _strip_tag_and_digest(self.reference)
        if self.repo_digest:
            return self.repo_digest if "@" in self.repo_digest else f"{name}@{self.repo_digest}"
        return f"{name}@{self.id}"


def _strip_tag_and_digest(ref: str) -> str:
    ref = ref.split("@", 1)[0]
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    return ref[:colon] if colon > slash else ref


class ContainerRuntime:
    """Base of the podman and docker runtimes (one engine command each).

    Unbound, it knows how to pick an image; ``bind`` resolves the image for a
    workspace and returns a bound copy that runs commands.
    """

    name = "container"
    engine = "false"
    # Where the tree and build dir are mounted: what its tools print (base.guest_paths).
    guest_paths = (GUEST_TREE, GUEST_BUILD)

    def __init__(self, options: ContainerOptions | None = None) -> None:
        self.options = options or ContainerOptions()
        self._workspace: Workspace | None = None
        self._image: Image | None = None
        self._mounts: list[tuple[str, str, str]] = []
        self._which: dict[str, str | None] = {}

    # -- engine specifics (subclasses) ------------------------------------------
    def user_args(self) -> list[str]:
        """Options that make files written in mounts belong to the caller."""
        return ["--user", f"{os.getuid()}:{os.getgid()}"]

    def remove_args(self, name: str) -> list[str]:
        return [self.engine, "rm", "--force", name]

    def version_args(self) -> list[str]:
        return [self.engine, "version", "--format", "{{.Server.Version}}"]

    def build_hint(self, ref: str) -> str:
        ws = self._workspace
        where = f"--arch {ws.arch} --toolchain {ws.toolchain} " if ws else ""
        return f"build it locally with: pytest-kbuild images build {where}--engine {self.engine}"

    # -- Runtime protocol -------------------------------------------------------
    def bind(self, workspace: Workspace) -> ContainerRuntime:
        bound = copy.copy(self)
        bound._workspace = workspace
        bound._which = {}
        bound._mounts = [
            (str(workspace.tree), GUEST_TREE, "ro"),
            (str(workspace.build_dir), GUEST_BUILD, "rw"),
        ]
        if workspace.cache_dir is not None:
            workspace.cache_dir.mkdir(parents=True, exist_ok=True)
            bound._mounts.append((str(workspace.cache_dir), GUEST_CACHE, "rw"))
        if workspace.jobserver is not None:
            bound._mounts.append((str(workspace.jobserver), GUEST_JOBSERVER, "rw"))
        if workspace.toolchain_dir is not None:
            # At its own path: LLVM=DIR/ and CROSS_COMPILE=DIR/... name it so.
            directory = str(workspace.toolchain_dir)
            bound._mounts.append((directory, directory, "ro"))
        ref = image_reference(
            self.options.image or DEFAULT_IMAGE, workspace.arch, workspace.toolchain
        )
        bound._image = bound.resolve_image(ref)
        return bound

    def which(self, tool: str) -> str | None:
        if tool not in self._which:
            # One container answers for this tool and every tool the image's
            # label promises: later which() calls of the build cost nothing.
            promised = self._image.labels.get(TOOLS_LABEL, "").split() if self._image else []
            tools = [tool, *(t for t in promised if t not in self._which and t != tool)]
            script = 'for t; do p=$(command -v "$t") && printf "%s\\t%s\\n" "$t" "$p"; done; true'
            rc, out = self.capture(["sh", "-c", script, "sh", *tools], cwd=None, env={})
            if rc != 0:
                return None
            found = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
            for t in tools:
                self._which[t] = found.get(t)
        return self._which[tool]

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output: BinaryIO,
        timeout: float | None = None,
    ) -> int:
        name, cmd = self.command(argv, cwd=cwd, env=env)
        output.write(f"# in {self.engine}: {shlex.join(cmd)}\n".encode())
        output.flush()
        try:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT
            )
        except OSError as err:
            raise KbuildInfraError(f"cannot run {self.engine}: {err}") from None
        try:
            return proc.wait(timeout=timeout)
        except BaseException:
            self._remove(name, proc)
            raise

    def capture(
        self, argv: Sequence[str], *, cwd: Path | None, env: Mapping[str, str]
    ) -> tuple[int, str]:
        name, cmd = self.command(argv, cwd=cwd, env=env)
        try:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
        except OSError as err:
            return 127, str(err)
        try:
            out, _ = proc.communicate(timeout=CAPTURE_TIMEOUT)
        except BaseException as err:
            self._remove(name, proc)
            if isinstance(err, subprocess.TimeoutExpired):
                return 124, f"timed out after {CAPTURE_TIMEOUT} s"
            raise
        return proc.returncode, out.decode(errors="replace")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "engine": self.engine,
            "engine_version": self.engine_version(),
            "network": self.options.network,
            "pull": self.options.pull,
        }
        if self._image is not None:
            out["image"] = {
                "reference": self._image.reference,
                "id": self._image.id,
                "digest": self._image.repo_digest,
                "pinned": self._image.pinned(),
                "size": self._image.size,
            }
            out["mounts"] = {guest: host for host, guest, _ in self._mounts}
        else:
            out["image"] = {"template": self.options.image or DEFAULT_IMAGE}
        return out

    def reproducer_args(self) -> list[str]:
        args = [f"--runtime={self.name}"]
        if self._image is not None:
            args.append(f"--image={self._image.pinned()}")
        elif self.options.image:
            args.append(f"--image={self.options.image}")
        if self.options.network != "none":
            args.append(f"--network={self.options.network}")
        return args

    # -- the container command --------------------------------------------------
    def command(
        self, argv: Sequence[str], *, cwd: Path | None, env: Mapping[str, str]
    ) -> tuple[str, list[str]]:
        """The engine command line that runs *argv*, and the container's name."""
        if self._image is None:
            raise KbuildInfraError(f"runtime {self.name} was used before bind()")
        name = f"kbuild-{uuid.uuid4().hex[:16]}"
        cmd = [self.engine, "run", "--rm", "--name", name, "--pull", "never"]
        if self._workspace is not None:
            # Lets anyone find (and remove) the containers of one build.
            cmd += ["--label", f"{CONTAINER_LABEL}={self._workspace.build_dir}"]
        cmd += ["--network", self.options.network] if self.options.network != "default" else []
        cmd += self.user_args()
        for host, guest, mode in self._mounts:
            cmd += ["--volume", f"{host}:{guest}:{mode}"]
        cmd += ["--tmpfs", "/tmp", "--env", "HOME=/tmp"]
        cmd += ["--workdir", self.guest_path(str(cwd)) if cwd is not None else GUEST_BUILD]
        for key, value in sorted(env.items()):
            cmd += ["--env", f"{key}={self.guest_path(value)}"]
        cmd.append(self._image_id())
        cmd += [self.guest_path(a) for a in argv]
        return name, cmd

    def interactive(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        """The engine command (stdin kept open, a terminal when there is one)
        and environment that run *argv* in the build's container (kbuild --shell)."""
        _, cmd = self.command(argv, cwd=cwd, env=env)
        attach = ["--interactive"] + (["--tty"] if sys.stdin.isatty() else [])
        return cmd[:2] + attach + cmd[2:], dict(os.environ)

    def guest_path(self, text: str) -> str:
        """*text* with host paths of mounted directories replaced by their
        paths in the container (also after ``=`` and ``:``, as in O=DIR, and
        before ``=``, as in -fdebug-prefix-map=DIR=.)."""
        for host, guest, _ in sorted(self._mounts, key=lambda m: -len(m[0])):
            pattern = r"(^|[=:])" + re.escape(host) + r"(?=/|$|:|=)"
            text = re.sub(pattern, r"\g<1>" + guest.replace("\\", "\\\\"), text)
        return text

    def _image_id(self) -> str:
        assert self._image is not None
        return self._image.id

    # -- images -----------------------------------------------------------------
    def inspect(self, ref: str) -> Image | None:
        """The local image *ref* (tag, name@digest or image id), or None."""
        done = _engine(self.engine, ["image", "inspect", ref])
        if done.returncode != 0 and "@sha256:" in ref:
            # docker keeps no digest for an image built here: pinned
            # references then carry the image id instead.
            done = _engine(self.engine, ["image", "inspect", ref.split("@", 1)[1]])
        if done.returncode != 0:
            return None
        try:
            data = json.loads(done.stdout)[0]
        except (ValueError, IndexError, KeyError):
            raise KbuildInfraError(
                f"{self.engine} image inspect {ref}: unreadable output"
            ) from None
        image_id = str(data.get("Id", ""))
        if not image_id.startswith("sha256:"):
            image_id = f"sha256:{image_id}"
        digests = [str(d) for d in data.get("RepoDigests") or []]
        name = _strip_tag_and_digest(ref)
        digest = next((d for d in digests if d.startswith(name + "@")), None)
        if digest is None and digests:
            digest = digests[0]
        labels = (data.get("Config") or {}).get("Labels") or data.get("Labels") or {}
        return Image(ref, image_id, digest, int(data.get("Size") or 0), dict(labels))

    def resolve_image(self, ref: str) -> Image:
        """The image to run for *ref*, pulled if the policy says so."""
        image = None if self.options.pull == "always" else self.inspect(ref)
        if image is None and self.options.pull != "never":
            pulled = _engine(self.engine, ["pull", ref], timeout=3600)
            if pulled.returncode == 0:
                image = self.inspect(ref)
            else:
                why = _last_line(pulled.stderr or pulled.stdout)
                if self.options.pull != "always":
                    why = f"not present locally, and pulling failed: {why}"
                raise ImageNotFound(ref, self.engine, why, self.build_hint(ref))
        if image is None:
            raise ImageNotFound(
                ref, self.engine, "not present locally (pull policy: never)", self.build_hint(ref)
            )
        return image

    def engine_version(self) -> str | None:
        return _engine_version(self.engine, tuple(self.version_args()))

    def _remove(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        """Remove the container (stopping it), then reap the engine client."""
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                self.remove_args(name),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=STOP_TIMEOUT,
                check=False,
            )
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_VERSIONS: dict[tuple[str, ...], str | None] = {}


def _engine_version(engine: str, args: tuple[str, ...]) -> str | None:
    if args not in _VERSIONS:
        done = _engine(engine, list(args[1:]))
        _VERSIONS[args] = done.stdout.strip() if done.returncode == 0 else None
    return _VERSIONS[args]


def _engine(engine: str, args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [engine, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise KbuildInfraError(
            f"runtime {engine}: {engine!r} not found on PATH; on Debian install: "
            + ("docker.io" if engine == "docker" else engine)
        ) from None
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([engine, *args], 124, "", f"timed out after {timeout} s")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
