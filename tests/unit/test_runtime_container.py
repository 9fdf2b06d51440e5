"""The container runtimes' logic without an engine: image references, the
container command line, path mapping, image resolution and pull policy."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from pytest_kbuild import runtime
from pytest_kbuild.errors import ImageNotFound, KbuildInfraError, KbuildUserError
from pytest_kbuild.runtime import container
from pytest_kbuild.runtime.base import Runtime, Workspace
from pytest_kbuild.runtime.container import (
    GUEST_BUILD,
    GUEST_CACHE,
    GUEST_TREE,
    ContainerOptions,
    Image,
    image_reference,
)
from pytest_kbuild.runtime.docker import DockerRuntime
from pytest_kbuild.runtime.podman import PodmanRuntime

IMAGE_ID = "sha256:" + "a" * 64
DIGEST = "sha256:" + "d" * 64


class FakeEngine:
    """Answers ``image inspect`` and ``pull`` like podman/docker would."""

    def __init__(self, images: dict[str, dict] | None = None, pullable: set[str] | None = None):
        self.images = dict(images or {})
        self.pullable = pullable or set()
        self.calls: list[list[str]] = []

    def __call__(self, engine: str, args: list[str], timeout: float = 120):
        self.calls.append(args)
        if args[:2] == ["image", "inspect"]:
            data = self.images.get(args[2])
            if data is None:
                return subprocess.CompletedProcess(args, 125, "[]", "image not known")
            return subprocess.CompletedProcess(args, 0, json.dumps([data]), "")
        if args[0] == "pull":
            if args[1] in self.pullable:
                self.images[args[1]] = _inspect_data()
                return subprocess.CompletedProcess(args, 0, "", "")
            return subprocess.CompletedProcess(args, 125, "", "Error: connection refused\n")
        if args[0] == "version":
            return subprocess.CompletedProcess(args, 0, "4.3.1\n", "")
        raise AssertionError(f"unexpected engine call {args}")


def _inspect_data(digests=(), labels=None):
    return {
        "Id": IMAGE_ID[7:],
        "RepoDigests": list(digests),
        "Size": 1000,
        "Config": {"Labels": labels or {}},
    }


@pytest.fixture
def engine(monkeypatch):
    fake = FakeEngine({"localhost/kbuild/x86_64_gcc": _inspect_data()})
    monkeypatch.setattr(container, "_engine", fake)
    return fake


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "build").mkdir()
    return Workspace("x86_64", "gcc", tmp_path / "tree", tmp_path / "build", tmp_path / "cache")


# -- image references ------------------------------------------------------------
def test_placeholders_are_filled_in():
    assert image_reference("r/{arch}_{toolchain}:1", "arm64", "clang-16") == "r/arm64_clang-16:1"
    assert image_reference("r/fixed@" + DIGEST, "arm64", "gcc") == "r/fixed@" + DIGEST


@pytest.mark.parametrize("bad", ["r/{arc}", "r/{arch", "r/{}", "r/arch}"])
def test_unknown_placeholder_names_it_and_the_accepted_ones(bad):
    with pytest.raises(KbuildUserError, match=r"is not a placeholder; accepted: \{arch\}"):
        image_reference(bad, "x86_64", "gcc")


def test_options_reject_unknown_pull_and_network():
    with pytest.raises(KbuildUserError, match="pull policy 'sometimes'.*missing, always, never"):
        ContainerOptions(pull="sometimes")
    with pytest.raises(KbuildUserError, match="network 'bridge'.*none, host, default"):
        ContainerOptions(network="bridge")


def test_pinned_prefers_the_registry_digest_else_the_image_id():
    with_digest = Image("r/x:tag", IMAGE_ID, "r/x@" + DIGEST, 1, {})
    assert with_digest.pinned() == "r/x@" + DIGEST
    without = Image("localhost:5000/r/x:tag", IMAGE_ID, None, 1, {})
    assert without.pinned() == "localhost:5000/r/x@" + IMAGE_ID


def test_registry_knows_both_engines_and_refuses_an_image_for_local():
    assert {"podman", "docker"} <= set(runtime.available())
    assert isinstance(runtime.make("podman"), PodmanRuntime)
    assert isinstance(runtime.make("docker"), DockerRuntime)
    with pytest.raises(KbuildUserError, match="needs a container runtime, not 'local'"):
        runtime.make("local", options=ContainerOptions(image="r/x"))


# -- binding and the container command -------------------------------------------
def test_bind_resolves_the_default_image_and_is_a_runtime(engine, ws):
    bound = PodmanRuntime().bind(ws)
    assert isinstance(bound, Runtime)
    assert bound.describe()["image"]["id"] == IMAGE_ID
    assert bound.describe()["mounts"] == {
        GUEST_TREE: str(ws.tree),
        GUEST_BUILD: str(ws.build_dir),
        GUEST_CACHE: str(ws.cache_dir),
    }


def test_command_mounts_tree_read_only_and_maps_host_paths(engine, ws):
    bound = DockerRuntime().bind(ws)
    env = {"CCACHE_DIR": str(ws.cache_dir), "X": "plain"}
    argv = ["make", f"O={ws.build_dir}", f"INSTALL_MOD_PATH={ws.build_dir}/mod", "tinyconfig"]
    name, cmd = bound.command(argv, cwd=ws.tree, env=env)
    assert cmd[:6] == ["docker", "run", "--rm", "--name", name, "--pull"]
    assert f"{ws.tree}:{GUEST_TREE}:ro" in cmd
    assert f"{ws.build_dir}:{GUEST_BUILD}:rw" in cmd
    assert cmd[cmd.index("--network") + 1] == "none"
    assert cmd[cmd.index("--workdir") + 1] == GUEST_TREE
    assert f"CCACHE_DIR={GUEST_CACHE}" in cmd and "X=plain" in cmd
    assert cmd[cmd.index("--user") + 1].count(":") == 1
    tail = cmd[cmd.index(IMAGE_ID) :]
    assert tail == [
        IMAGE_ID,
        "make",
        f"O={GUEST_BUILD}",
        f"INSTALL_MOD_PATH={GUEST_BUILD}/mod",
        "tinyconfig",
    ]


def test_path_mapping_does_not_touch_lookalike_paths(engine, ws):
    bound = PodmanRuntime().bind(ws)
    assert bound.guest_path(f"{ws.build_dir}-other/x") == f"{ws.build_dir}-other/x"
    assert bound.guest_path(f"{ws.tree}/scripts/x.sh") == f"{GUEST_TREE}/scripts/x.sh"
    assert bound.guest_path(f"a:{ws.build_dir}") == f"a:{GUEST_BUILD}"


def test_path_mapping_of_a_prefix_map_flag(engine, ws):
    # reproducible mode's KCFLAGS: -fdebug-prefix-map=DIR=. names the
    # directory as the compiler in the container sees it.
    bound = PodmanRuntime().bind(ws)
    flags = f"-fdebug-prefix-map={ws.tree}=. -fdebug-prefix-map={ws.build_dir}=."
    assert bound.guest_path(flags) == (
        f"-fdebug-prefix-map={GUEST_TREE}=. -fdebug-prefix-map={GUEST_BUILD}=."
    )
    assert bound.guest_path(f"-fx={ws.build_dir}-other=.") == f"-fx={ws.build_dir}-other=."


def test_rootless_podman_keeps_the_callers_id(engine, ws, monkeypatch):
    monkeypatch.setattr("os.getuid", lambda: 1000)
    monkeypatch.setattr("os.getgid", lambda: 1000)
    assert PodmanRuntime().user_args() == ["--userns=keep-id"]
    assert DockerRuntime().user_args() == ["--user", "1000:1000"]


def test_network_opt_in_reaches_the_command_and_the_reproducer(engine, ws):
    bound = PodmanRuntime(ContainerOptions(network="host")).bind(ws)
    _, cmd = bound.command(["true"], cwd=None, env={})
    assert cmd[cmd.index("--network") + 1] == "host"
    assert "--network=host" in bound.reproducer_args()


def test_reproducer_pins_the_image(engine, ws):
    engine.images["localhost/kbuild/x86_64_gcc"] = _inspect_data(
        digests=["localhost/kbuild/x86_64_gcc@" + DIGEST]
    )
    args = PodmanRuntime().bind(ws).reproducer_args()
    assert args == ["--runtime=podman", "--image=localhost/kbuild/x86_64_gcc@" + DIGEST]


def test_unbound_runtime_refuses_to_run(ws):
    with pytest.raises(KbuildInfraError, match="used before bind"):
        PodmanRuntime().command(["true"], cwd=None, env={})


# -- image resolution and pull policy ---------------------------------------------
def test_pinned_image_id_reference_falls_back_to_the_id(engine, ws):
    engine.images[IMAGE_ID] = _inspect_data()
    opts = ContainerOptions(image="localhost/kbuild/x86_64_gcc@" + IMAGE_ID, pull="never")
    assert DockerRuntime(opts).bind(ws).describe()["image"]["id"] == IMAGE_ID


def test_missing_image_is_pulled_when_policy_is_missing(engine, ws):
    engine.pullable.add("r/arm64_gcc")
    opts = ContainerOptions(image="r/{arch}_{toolchain}")
    bound = PodmanRuntime(opts).bind(Workspace("arm64", "gcc", ws.tree, ws.build_dir))
    assert bound.describe()["image"]["reference"] == "r/arm64_gcc"
    assert ["pull", "r/arm64_gcc"] in engine.calls


def test_missing_image_error_says_how_to_build_it(engine, ws):
    opts = ContainerOptions(image="r/{arch}_{toolchain}")
    with pytest.raises(ImageNotFound) as err:
        PodmanRuntime(opts).bind(Workspace("arm64", "clang-16", ws.tree, ws.build_dir))
    msg = str(err.value)
    assert "image 'r/arm64_clang-16' (podman): not present locally, and pulling failed" in msg
    assert "connection refused" in msg
    assert "pytest-kbuild images build --arch arm64 --toolchain clang-16 --engine podman" in msg


def test_never_policy_does_not_pull(engine, ws):
    opts = ContainerOptions(image="r/none", pull="never")
    with pytest.raises(ImageNotFound, match=r"not present locally \(pull policy: never\)"):
        DockerRuntime(opts).bind(ws)
    assert not [c for c in engine.calls if c[0] == "pull"]


def test_always_policy_pulls_even_a_present_image(engine, ws):
    with pytest.raises(ImageNotFound, match="connection refused"):
        PodmanRuntime(ContainerOptions(pull="always")).bind(ws)


def test_missing_engine_is_a_clear_error(monkeypatch, ws):
    monkeypatch.setenv("PATH", str(Path(ws.tree)))
    with pytest.raises(KbuildInfraError, match="'podman' not found on PATH; on Debian install"):
        PodmanRuntime().bind(ws)


def test_a_toolchain_directory_is_mounted_read_only_at_its_own_path(engine, ws, tmp_path):
    tools = tmp_path / "llvm-21" / "bin"
    tools.mkdir(parents=True)
    bound = PodmanRuntime().bind(dataclasses.replace(ws, toolchain_dir=tools))
    assert bound.describe()["mounts"][str(tools)] == str(tools)
    _, cmd = bound.command([f"{tools}/clang", "--version"], cwd=ws.tree, env={"LLVM": f"{tools}/"})
    assert f"{tools}:{tools}:ro" in cmd
    assert cmd[-2:] == [f"{tools}/clang", "--version"]  # the same path inside
    assert f"LLVM={tools}/" in cmd
    assert not any(f"{tools}:" in a for a in _mount_args(PodmanRuntime().bind(ws)))


def _mount_args(bound):
    _, cmd = bound.command(["true"], cwd=None, env={})
    return [cmd[i + 1] for i, a in enumerate(cmd) if a == "--volume"]
