import dataclasses
import posixpath

import pytest

from pytest_kbuild import definitions, kconfig
from pytest_kbuild.arch import Arch
from pytest_kbuild.errors import DefinitionError, UnknownTarget
from pytest_kbuild.targets import Target, default_targets, with_dependencies

TARGETS = definitions.available("target")
ARCHES = definitions.available("arch")
KEYS = {
    "order",
    "kind",
    "depends",
    "commands",
    "artifacts",
    "requires_arch",
    "requires_config",
    "conflicts_config",
}
X86 = Arch.load("x86_64")


@pytest.mark.parametrize("name", TARGETS)
def test_every_target_file(name):
    t = Target.load(name)
    d = definitions.load("target", name)
    assert t.name == name
    assert set(d.fields) <= KEYS, f"{d.path}: unknown keys {set(d.fields) - KEYS}"
    assert t.kind in ("config", "commands")
    if t.kind == "commands":
        assert t.commands, f"{d.path}: a commands target needs commands"
    for dep in t.depends:
        assert dep in TARGETS, f"{d.path}: depends on unknown target {dep!r}"
        assert Target.load(dep).order < t.order, f"{d.path}: {dep} must come first"
    if t.requires_arch:
        assert hasattr(X86, t.requires_arch), f"{d.path}: requires_arch {t.requires_arch!r}"
    for req in t.requires_config + t.conflicts_config:
        assert kconfig.parse_literal(req) is not None, f"{d.path}: config condition {req!r}"


def test_orders_are_unique():
    orders = [Target.load(n).order for n in TARGETS]
    assert len(set(orders)) == len(orders)


@pytest.mark.parametrize("name", TARGETS)
def test_commands_and_artifacts_expand_for_every_arch(name):
    t = Target.load(name)
    for arch in ARCHES:
        a = Arch.load(arch)
        if t.arch_reason(a):
            continue
        commands = t.expanded_commands(a, "/build")
        assert all("{" not in arg for cmd in commands for arg in cmd)
        for result_name, rel in t.expanded_artifacts(a).items():
            assert result_name and "/" not in result_name, (arch, result_name)
            assert rel and not posixpath.isabs(rel) and ".." not in rel.split("/"), (arch, rel)


def test_default_targets_in_build_order():
    names = default_targets()
    assert sorted(names) == TARGETS
    assert names[0] == "config"
    orders = [Target.load(n).order for n in names]
    assert orders == sorted(orders)


def test_with_dependencies():
    assert with_dependencies([]) == []
    assert with_dependencies(["config"]) == ["config"]
    assert with_dependencies(["kernel"]) == ["config", "kernel"]
    assert with_dependencies(["headers", "kernel", "kernel"]) == ["config", "kernel", "headers"]


def test_kernel_for_x86_64():
    t = Target.load("kernel")
    assert t.depends == ("config",)
    assert t.expanded_commands(X86, "/b") == [["make", "bzImage"]]
    assert t.expanded_artifacts(X86) == {"bzImage": "arch/x86/boot/bzImage"}


def test_config():
    t = Target.load("config")
    assert t.kind == "config"
    assert t.order == 0
    assert t.expanded_artifacts(X86) == {"config": ".config"}


def test_debugkernel_commands_use_the_build_dir():
    assert Target.load("debugkernel").expanded_commands(X86, "/b") == [
        ["make", "vmlinux"],
        ["xz", "-T0", "--keep", "--force", "/b/vmlinux"],
    ]


def test_arch_reason_dtbs():
    t = Target.load("dtbs")
    assert t.arch_reason(X86) == "dtbs does not apply to arch x86_64 (arch data: no dtbs)"
    assert t.arch_reason(dataclasses.replace(X86, dtbs=True)) is None


def test_arch_reason_xipkernel():
    t = Target.load("xipkernel")
    assert t.arch_reason(X86) == (
        "xipkernel does not apply to arch x86_64 (arch data: no xip_image)"
    )
    xip = dataclasses.replace(X86, xip_image="xipImage", xip_image_path="arch/x86/boot/xipImage")
    assert t.arch_reason(xip) is None
    assert t.expanded_commands(xip, "/b") == [["make", "xipImage"]]
    assert t.expanded_artifacts(xip) == {"xipImage": "arch/x86/boot/xipImage"}


def test_config_conditions():
    assert Target.load("modules").requires_config == ("CONFIG_MODULES=y",)
    assert Target.load("kernel").requires_config == ()
    assert Target.load("kernel").conflicts_config == ("CONFIG_XIP_KERNEL=y",)
    assert Target.load("xipkernel").requires_config == ("CONFIG_XIP_KERNEL=y",)


def test_unknown_target_message():
    with pytest.raises(UnknownTarget) as exc:
        Target.load("bzImage", "targets")
    assert str(exc.value) == (
        f"targets: unknown target 'bzImage'; known: {', '.join(sorted(TARGETS))}"
    )
    assert exc.value.name == "bzImage"


@pytest.mark.parametrize("commands", ["make", "[make, kernel]", "[[]]", "[[make, 1]]", "[{a: b}]"])
def test_malformed_commands(data_dir, commands):
    path = data_dir / "target" / "badcommands.yaml"
    path.write_text(f"order: 9\ncommands: {commands}\n")
    with pytest.raises(DefinitionError) as exc:
        Target.load("badcommands")
    msg = str(exc.value)
    assert msg.startswith(f"{path}: ")
    assert (
        msg.endswith("'commands' must be a list of non-empty string lists")
        or "key 'commands' must be list" in msg
    )


def test_missing_order(data_dir):
    path = data_dir / "target" / "noorder.yaml"
    path.write_text("commands: [[make, x]]\n")
    with pytest.raises(DefinitionError) as exc:
        Target.load("noorder")
    assert str(exc.value) == f"{path}: missing key 'order'"
