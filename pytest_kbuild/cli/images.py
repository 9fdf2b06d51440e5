"""Curated container images: build them from the recipes under data/image/
(on a Debian base made with debootstrap when no registry is reachable),
list them, and check that an image has the tools it promises. What the
targets need from PyPI is installed with the host's pip index and CA bundle
(pipindex.py), which the build gets as a build arg and a file of its context."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .. import definitions
from ..definitions.arch import Arch
from ..definitions.toolchain import Toolchain
from ..errors import KbuildInfraError, KbuildUserError
from ..parsers import image_reference
from ..runtime.container import DEFAULT_IMAGE, ContainerRuntime
from ..runtime.docker import DockerRuntime
from ..runtime.podman import PodmanRuntime
from . import hostpackages, pipindex

ENGINES: dict[str, Callable[[], ContainerRuntime]] = {
    "podman": PodmanRuntime,
    "docker": DockerRuntime,
}
BASE_IMAGE = "localhost/kbuild/base:bookworm"
FALLBACK_BASE = "debian:bookworm-slim"
LABEL = "org.pytest-kbuild"
# The host's CA bundle for pip, in the build context (empty: the image's own).
PIP_CA = "pip-ca.crt"
APT_SOURCES = (Path("/etc/apt/sources.list.d"), Path("/etc/apt/sources.list"))
SECURITY_MIRROR = "http://security.debian.org/debian-security"


def engine(name: str) -> ContainerRuntime:
    try:
        return ENGINES[name]()
    except KeyError:
        raise KbuildUserError(
            f"engine {name!r} is not known; accepted: {', '.join(sorted(ENGINES))}"
        ) from None


@dataclass(frozen=True)
class Recipe:
    """How to build the image of one arch and toolchain."""

    arch: Arch
    toolchain: Toolchain
    containerfile: Path
    build_args: dict[str, str]
    tools: tuple[str, ...]
    declared: frozenset[str] = frozenset()  # the Containerfile's ARGs

    @classmethod
    def of(cls, arch_name: str, toolchain_name: str) -> Recipe:
        arch = Arch.load(arch_name, "--arch")
        toolchain = Toolchain.load(toolchain_name, "--toolchain")
        unsupported = toolchain.supports(arch)
        if unsupported:
            raise KbuildUserError(unsupported)
        family = definitions.load("image", toolchain.family, "--toolchain")
        common = definitions.load("image", "common")
        machine = platform.machine()
        packages = toolchain.debian_packages(arch, machine) + sorted(set(arch.host_tools.values()))
        cross = arch.cross_compile_for(machine)
        values = {
            "compiler": toolchain.compiler(arch, machine),
            "cross_compile": cross,
            "version_suffix": f"-{toolchain.version}" if toolchain.version else "",
        }
        tools = [str(t) for t in definitions.optional(common, "tools", list, [])]
        tools += [
            definitions.expand(family, str(t), values)
            for t in definitions.optional(family, "tools", list, [])
        ]
        tools += sorted(arch.host_tools)
        containerfile = family.path.parent / definitions.require(family, "containerfile", str)
        common_packages = hostpackages.common() + [
            str(p) for p in definitions.optional(common, "image_packages", list, [])
        ]
        args = {
            "COMMON_PACKAGES": " ".join(common_packages),
            "TOOLCHAIN_PACKAGES": " ".join(packages),
            "PYPI_PACKAGES": " ".join(hostpackages.pypi_all()),
        }
        declared = set(re.findall(r"^ARG\s+(\w+)", containerfile.read_text(), re.M))
        return cls(
            arch=arch,
            toolchain=toolchain,
            containerfile=containerfile,
            build_args={k: v for k, v in args.items() if k in declared},
            tools=tuple(dict.fromkeys(tools)),
            declared=frozenset(declared),
        )

    def name(self, template: str = DEFAULT_IMAGE) -> str:
        return image_reference(template, self.arch.name, self.toolchain.name)


def build_context(recipe: Recipe, pip: pipindex.PipIndex, context: Path) -> dict[str, str]:
    """Fill *context* (an empty directory) with *recipe*'s Containerfile and
    the host's pip CA bundle (an empty file without one); return the build
    args, the host's pip index among them when it has one."""
    shutil.copyfile(recipe.containerfile, context / recipe.containerfile.name)
    (context / PIP_CA).write_bytes(pip.cert.read_bytes() if pip.cert else b"")
    args = dict(recipe.build_args)
    if pip.index_url and "PIP_INDEX_URL" in recipe.declared:
        args["PIP_INDEX_URL"] = pip.index_url
    return args


def build(
    recipe: Recipe,
    engine_name: str,
    base: str | None = None,
    name: str | None = None,
    network: str | None = None,
    out: TextIO = sys.stdout,
) -> tuple[str, float]:
    """Build *recipe*'s image with *engine_name*; return (image id, seconds)."""
    rt = engine(engine_name)
    base = base or (BASE_IMAGE if rt.inspect(BASE_IMAGE) else FALLBACK_BASE)
    tag = name or recipe.name()
    with tempfile.TemporaryDirectory(prefix="kbuild-image-") as context:
        args = build_context(recipe, pipindex.host(), Path(context))
        containerfile = Path(context) / recipe.containerfile.name
        cmd = [rt.engine, "build", "--file", str(containerfile), "--tag", tag]
        cmd += ["--build-arg", f"BASE={base}"]
        cmd += [f"--build-arg={k}={v}" for k, v in args.items()]
        cmd += [
            f"--label={LABEL}.arch={recipe.arch.name}",
            f"--label={LABEL}.toolchain={recipe.toolchain.name}",
            f"--label={LABEL}.tools={' '.join(recipe.tools)}",
        ]
        cmd += [f"--network={network}"] if network else []
        cmd.append(context)
        print(f"$ {' '.join(cmd)}", file=out, flush=True)
        started = time.monotonic()
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        took = time.monotonic() - started
    if done.returncode != 0:
        raise KbuildInfraError(
            f"{rt.engine} build of {tag} failed (exit {done.returncode}); see the output above"
        )
    image = rt.inspect(tag)
    if image is None:
        raise KbuildInfraError(f"{rt.engine} build of {tag} passed but the image is missing")
    return image.id, took


def make_base(
    engine_name: str,
    name: str = BASE_IMAGE,
    suite: str = "bookworm",
    mirror: str | None = None,
    out: TextIO = sys.stdout,
) -> str:
    """A minimal Debian image made with debootstrap and imported; its id."""
    rt = engine(engine_name)
    if shutil.which("debootstrap") is None:
        raise KbuildInfraError("'debootstrap' not found on PATH; on Debian install: debootstrap")
    mirror = mirror or host_mirror()
    with tempfile.TemporaryDirectory(prefix="kbuild-base-") as tmp:
        root = Path(tmp) / "root"
        cmd = ["debootstrap", "--variant=minbase", suite, str(root), mirror]
        print(f"$ {' '.join(cmd)}", file=out, flush=True)
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join(done.stdout.splitlines()[-5:] + done.stderr.splitlines()[-5:])
            raise KbuildInfraError(f"debootstrap {suite} from {mirror} failed:\n{tail}")
        write_sources(root, suite, mirror, host_security_mirror())
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for p in (root / cache).glob("*"):
                if p.is_file():
                    p.unlink()
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            [rt.engine, "import", "-", name], stdin=tar.stdout, capture_output=True, text=True
        )
        assert tar.stdout is not None
        tar.stdout.close()
        tar.wait()
        if imported.returncode != 0 or tar.returncode != 0:
            raise KbuildInfraError(f"{rt.engine} import {name} failed: {imported.stderr.strip()}")
    image = rt.inspect(name)
    if image is None:
        raise KbuildInfraError(f"{rt.engine} import {name} passed but the image is missing")
    return image.id


def write_sources(root: Path, suite: str, mirror: str, security: str) -> None:
    """The image's apt sources as a Debian install has them: the suite and
    its updates from *mirror*, its security updates from *security* (a
    fresh Debian 12 gets today's packages, as this host does, not those of
    the release; debootstrap writes the suite alone)."""
    (root / "etc/apt/sources.list").unlink(missing_ok=True)
    listing = root / "etc/apt/sources.list.d" / "debian.sources"
    listing.parent.mkdir(parents=True, exist_ok=True)
    key = "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    listing.write_text(
        f"Types: deb\nURIs: {mirror}\nSuites: {suite} {suite}-updates\nComponents: main\n{key}\n"
        f"Types: deb\nURIs: {security}\nSuites: {suite}-security\nComponents: main\n{key}"
    )


def host_security_mirror(sources: Sequence[Path] = APT_SOURCES) -> str:
    """The mirror of Debian's security updates this host's apt uses, else
    Debian's own."""
    for text in _source_texts(sources):
        for stanza in re.split(r"\n\s*\n", text):  # deb822: one source per stanza
            uri = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            if uri and re.search(r"^Suites:.*-security\b", stanza, re.M):
                return uri.group(1)
        line = re.search(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+\S+-security\b", text, re.M)
        if line:
            return line.group(1)
    return SECURITY_MIRROR


def _source_texts(sources: Sequence[Path]) -> Iterator[str]:
    """The text of each apt sources file of *sources* (files, or dirs of
    ``*.sources`` and ``*.list``), in apt's order."""
    for src in sources:
        files = [src]
        if src.is_dir():
            files = sorted(src.glob("*.sources")) + sorted(src.glob("*.list"))
        for f in files:
            if f.is_file():
                yield f.read_text(errors="replace")


def host_mirror(sources: Sequence[Path] = APT_SOURCES) -> str:
    """The first Debian mirror this host's apt uses (for debootstrap)."""
    for text in _source_texts(sources):
        m = re.search(r"^URIs:\s*(\S+)", text, re.M) or re.search(
            r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)", text, re.M
        )
        if m:
            return m.group(1)
    raise KbuildUserError(
        "no Debian mirror found in this host's apt sources; give one with --mirror URL"
    )


def check(recipe: Recipe, engine_name: str, image: str | None = None) -> list[str]:
    """Tools *recipe* promises that are missing from the image (empty: all there)."""
    rt = engine(engine_name)
    ref = image or recipe.name()
    found = rt.inspect(ref)
    if found is None:
        raise KbuildInfraError(f"image {ref!r} is not present in {rt.engine}")
    tools = list(recipe.tools)
    script = 'for t; do command -v "$t" >/dev/null 2>&1 || echo "$t"; done'
    cmd = [rt.engine, "run", "--rm", "--network", "none", found.id, "sh", "-c", script, "sh"]
    done = subprocess.run(cmd + tools, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise KbuildInfraError(f"cannot run {ref!r}: {done.stderr.strip()}")
    return done.stdout.split()


def listing(engine_name: str) -> list[dict[str, str]]:
    """Curated images present in *engine_name*: name, id, arch, toolchain, size."""
    rt = engine(engine_name)
    fmt = "{{.Repository}}:{{.Tag}}"
    cmd = [rt.engine, "images", "--filter", f"label={LABEL}.toolchain", "--format", fmt]
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise KbuildInfraError(f"{rt.engine} images failed: {done.stderr.strip()}")
    rows = []
    for ref in sorted(set(done.stdout.split())):
        image = rt.inspect(ref)
        if image is None:
            continue
        rows.append(
            {
                "image": ref,
                "id": image.id,
                "digest": image.repo_digest or "",
                "size_mb": f"{image.size / 1e6:.0f}",
                "arch": image.labels.get(f"{LABEL}.arch", ""),
                "toolchain": image.labels.get(f"{LABEL}.toolchain", ""),
            }
        )
    return rows
