import dataclasses
import hashlib
import posixpath

import pytest

from pytest_kbuild import definitions, kconfig
from pytest_kbuild.build import steps
from pytest_kbuild.definitions import targets
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.definitions.targets import Target, default_targets, with_dependencies
from pytest_kbuild.errors import BadMakeGoal, DefinitionError, UnknownTarget
from pytest_kbuild.results import Status

TARGETS = definitions.available("target")
ARCHES = definitions.available("arch")
KEYS = {
    "order",
    "timeout",
    "kind",
    "depends",
    "commands",
    "pypi_packages",
    "artifacts",
    "requires_arch",
    "requires_config",
    "conflicts_config",
    "host_tools",
    "config_tools",
    "packages",
    "default",
    "skip_without",
}
X86 = Arch.load("x86_64")


@pytest.mark.parametrize("name", TARGETS)
def test_every_target_file(name):
    t = Target.load(name)
    d = definitions.load("target", name)
    assert t.name == name
    assert set(d.fields) <= KEYS, f"{d.path}: unknown keys {set(d.fields) - KEYS}"
    assert t.kind in steps.RUNNERS
    if t.kind == "commands":
        assert t.commands, f"{d.path}: a commands target needs commands"
    for dep in t.depends:
        assert dep in TARGETS, f"{d.path}: depends on unknown target {dep!r}"
        assert Target.load(dep).order < t.order, f"{d.path}: {dep} must come first"
    if t.requires_arch:
        assert hasattr(X86, t.requires_arch), f"{d.path}: requires_arch {t.requires_arch!r}"
    for req in t.requires_config + t.conflicts_config + tuple(t.config_tools):
        assert kconfig.parse_literal(req) is not None, f"{d.path}: config condition {req!r}"
    # boot and kunit run QEMU, checked per arch (data/boot/), and no other host tool
    for tools in (
        [t.host_tools, *t.config_tools.values()] if t.kind not in ("boot", "kunit") else []
    ):
        assert tools and all(tool and package for tool, package in tools.items()), d.path


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
            assert rel and not posixpath.isabs(rel), (arch, rel)
            # Only a glob may look beside the build dir (bindeb-pkg's ../*.deb).
            assert ".." not in rel.split("/") or "*" in result_name, (arch, rel)


def test_default_targets_in_build_order():
    names = default_targets()
    assert sorted(names) == [n for n in TARGETS if Target.load(n).default]
    assert {"config", "kernel", "modules", "dtbs", "headers"} <= set(names)
    assert not {"kselftest", "perf", "bindeb-pkg", "htmldocs", "boot"} & set(names)
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
        ["xz", "-T1", "--keep", "--force", "/b/vmlinux"],
    ]


@pytest.mark.parametrize(
    ("compression", "command", "suffix"),
    [
        ("xz", [["xz", "-T1", "--keep", "--force", "/b/vmlinux"]], ".xz"),
        ("zstd", [["zstd", "-q", "--keep", "--force", "/b/vmlinux"]], ".zst"),
        ("none", [], ""),
    ],
)
def test_compression_picks_the_command_and_suffix(compression, command, suffix):
    debug = Target.load("debugkernel")
    assert debug.expanded_commands(X86, "/b", compression) == [["make", "vmlinux"], *command]
    assert debug.expanded_artifacts(X86, compression) == {
        f"vmlinux{suffix}": f"vmlinux{suffix}",
        "System.map": "System.map",
    }
    for name in ("modules", "dtbs", "headers"):
        t = Target.load(name)
        assert t.compresses()
        tar = [c for c in t.expanded_commands(X86, "/b", compression) if c[0] == "tar"]
        assert tar[0][2] == f"/b/{name}.tar{suffix}"  # tar -caf picks the compressor
        assert t.expanded_artifacts(X86, compression) == {
            f"{name}.tar{suffix}": f"{name}.tar{suffix}"
        }
    assert not Target.load("kernel").compresses()


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
        f"targets: unknown target 'bzImage'; known: {', '.join(sorted([*TARGETS, 'make:<goal>']))}"
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


def test_dtbs_check_needs_dtschema_from_pypi():
    t = Target.load("dtbs_check")
    assert t.pypi_packages == ("dtschema==2022.12",)
    assert "python3-libfdt" in t.packages
    assert Target.load("kernel").pypi_packages == ()


@pytest.mark.parametrize("value", ["dtschema", "[dtschema>2]", "['']", "[1]", "['a b']"])
def test_malformed_pypi_packages(data_dir, value):
    path = data_dir / "target" / "badpypi.yaml"
    path.write_text(f"order: 9\npypi_packages: {value}\n")
    with pytest.raises(DefinitionError) as exc:
        Target.load("badpypi")
    msg = str(exc.value)
    assert msg.startswith(f"{path}: ")
    assert "'pypi_packages' must be a list of PyPI requirements" in msg or "must be list" in msg


def test_missing_order(data_dir):
    path = data_dir / "target" / "noorder.yaml"
    path.write_text("commands: [[make, x]]\n")
    with pytest.raises(DefinitionError) as exc:
        Target.load("noorder")
    assert str(exc.value) == f"{path}: missing key 'order'"


# -- host tools ---------------------------------------------------------------------------

# What each target runs besides make and the compiler, on every build (Linux 6.1's
# Makefiles: headers_install runs rsync, Kbuild runs bc for timeconst.h, ...).
HOST_TOOLS = {
    "boot": {},
    "kunit": {},
    "config": {"flex": "flex", "bison": "bison"},
    "kernel": {"bc": "bc", "gzip": "gzip"},
    "xipkernel": {"bc": "bc"},
    "debugkernel": {"bc": "bc", "xz": "xz-utils"},
    "modules": {"bc": "bc", "depmod": "kmod", "tar": "tar", "xz": "xz-utils"},
    "dtbs": {"tar": "tar", "xz": "xz-utils"},
    "headers": {"rsync": "rsync", "tar": "tar", "xz": "xz-utils"},
    # Not in the default set: tools, packages, checks and documents.
    "kselftest": {"rsync": "rsync", "tar": "tar", "xz": "xz-utils"},
    "perf": {
        "flex": "flex",
        "bison": "bison",
        "pkg-config": "pkg-config",
        "tar": "tar",
        "xz": "xz-utils",
    },
    "cpupower": {"msgfmt": "gettext", "tar": "tar", "xz": "xz-utils"},
    "bindeb-pkg": {
        "dpkg-buildpackage": "dpkg-dev",
        "fakeroot": "fakeroot",
        "bc": "bc",
        "rsync": "rsync",
        "depmod": "kmod",
    },
    "binrpm-pkg": {"bc": "bc", "depmod": "kmod"},
    "targz-pkg": {"bc": "bc", "depmod": "kmod", "tar": "tar", "gzip": "gzip"},
    "tarxz-pkg": {"bc": "bc", "depmod": "kmod", "tar": "tar", "xz": "xz-utils"},
    "dtbs_check": {"dtc": "device-tree-compiler"},
    "htmldocs": {"sphinx-build": "python3-sphinx", "tar": "tar", "xz": "xz-utils"},
}


def test_host_tools_of_every_target():
    assert {n: dict(Target.load(n).host_tools) for n in TARGETS} == HOST_TOOLS


@pytest.mark.parametrize(
    ("name", "option", "tool", "package"),
    [
        ("kernel", "CONFIG_KERNEL_BZIP2=y", "bzip2", "bzip2"),
        ("kernel", "CONFIG_KERNEL_LZMA=y", "lzma", "xz-utils"),
        ("kernel", "CONFIG_KERNEL_XZ=y", "xz", "xz-utils"),
        ("kernel", "CONFIG_KERNEL_LZO=y", "lzop", "lzop"),
        ("kernel", "CONFIG_KERNEL_LZ4=y", "lz4", "lz4"),
        ("kernel", "CONFIG_KERNEL_ZSTD=y", "zstd", "zstd"),
        ("kernel", "CONFIG_INITRAMFS_COMPRESSION_LZO=y", "lzop", "lzop"),
        ("kernel", "CONFIG_IKHEADERS=y", "cpio", "cpio"),
        ("debugkernel", "CONFIG_INITRAMFS_COMPRESSION_BZIP2=y", "bzip2", "bzip2"),
        ("xipkernel", "CONFIG_INITRAMFS_COMPRESSION_ZSTD=y", "zstd", "zstd"),
        ("modules", "CONFIG_MODULE_COMPRESS_ZSTD=y", "zstd", "zstd"),
        ("modules", "CONFIG_MODULE_COMPRESS_GZIP=y", "gzip", "gzip"),
        ("modules", "CONFIG_IKHEADERS=m", "cpio", "cpio"),
        ("modules", 'CONFIG_MODULE_SIG_KEY="certs/signing_key.pem"', "openssl", "openssl"),
    ],
)
def test_config_tools_follow_the_config(name, option, tool, package):
    t = Target.load(name)
    assert t.tools(f"{option}\n")[tool] == (package, option)
    assert tool not in t.tools("CONFIG_KERNEL_GZIP=y\n")


@pytest.mark.parametrize("name", TARGETS)
def test_every_config_tool_is_asked_for_by_its_option(name):
    t = Target.load(name)
    for option, tools in t.config_tools.items():
        found = t.tools(f"CONFIG_UNRELATED=y\n{option}\n")
        for tool, package in tools.items():
            assert found[tool][0] == package, (name, option)
            assert found[tool][1] in ("", option), (name, option)
    assert t.tools("") == {tool: (pkg, "") for tool, pkg in t.host_tools.items()}


def test_a_module_built_in_or_as_module_needs_the_right_target():
    assert "cpio" not in Target.load("kernel").tools("CONFIG_IKHEADERS=m\n")
    assert "cpio" not in Target.load("modules").tools("CONFIG_IKHEADERS=y\n")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("host_tools: [rsync]", "key 'host_tools' must be dict, got ['rsync']"),
        (
            "host_tools: {rsync: ''}",
            "'host_tools' must map tool names to Debian packages, e.g. {rsync: rsync}",
        ),
        (
            "config_tools: {KERNEL_LZO: {lzop: lzop}}",
            "config_tools key 'KERNEL_LZO' must be a .config line such as CONFIG_KERNEL_LZO=y",
        ),
        (
            "config_tools: {CONFIG_KERNEL_LZO=y: lzop}",
            "'config_tools.CONFIG_KERNEL_LZO=y' must map tool names to Debian packages, "
            "e.g. {rsync: rsync}",
        ),
    ],
)
def test_malformed_tools(data_dir, body, message):
    # Target.load caches by name: one name per case.
    name = f"badtools{hashlib.sha256(body.encode()).hexdigest()[:8]}"
    path = data_dir / "target" / f"{name}.yaml"
    path.write_text(f"order: 9\ncommands: [[make, x]]\n{body}\n")
    with pytest.raises(DefinitionError) as exc:
        Target.load(name)
    assert str(exc.value) == f"{path}: {message}"


# -- make:<goal>, kselftest, skip_without ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "command", "item"),
    [
        ("make:drivers/dma/", ["make", "drivers/dma/"], "make-drivers-dma"),
        ("make:kernel/fork.o", ["make", "kernel/fork.o"], "make-kernel-fork-o"),
        ("make:modules_prepare", ["make", "modules_prepare"], "make-modules_prepare"),
        ("make:W=1 kernel/", ["make", "W=1", "kernel/"], "make-W-1-kernel"),
    ],
)
def test_make_goal_targets(name, command, item):
    t = Target.load(name)
    assert (t.name, t.depends, t.default) == (name, ("config",), False)
    assert t.expanded_commands(X86, "/b") == [command]
    assert t.expanded_artifacts(X86) == {}
    assert t.item_id == item
    assert with_dependencies([name, "kernel"]) == ["config", "kernel", name]


def test_make_goals_sort_by_name_after_every_file_target():
    names = ["make:b/", "make:a/", "kselftest", "kernel"]
    assert with_dependencies(names) == ["config", "kernel", "kselftest", "make:a/", "make:b/"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("make:", "no goal"),
        ("make:  ", "no goal"),
        ("make:W=1", "no goal"),
        ("make:-j8 vmlinux", "'-j8' is a make option or a variable set by pytest-kbuild"),
        ("make:ARCH=arm vmlinux", "'ARCH=arm' is a make option or a variable set by pytest-kbuild"),
    ],
)
def test_bad_make_goal(name, why):
    with pytest.raises(BadMakeGoal) as exc:
        Target.load(name, "matrix.targets[0]")
    assert str(exc.value) == (
        f"matrix.targets[0]: target {name!r}: {why}; expected make:<goal> [VAR=value ...] "
        "(make:drivers/dma/, make:kernel/fork.o, make:W=1 kernel/)"
    )
    assert exc.value.name == name


def test_kselftest_drops_cc_and_hostcc_under_llvm_only():
    t = Target.load("kselftest")
    llvm = {"ARCH": "x86_64", "LLVM": "-16", "CC": "clang-16", "HOSTCC": "clang-16"}
    assert t.adjust_makevars(dict(llvm), {}) == {"ARCH": "x86_64", "LLVM": "-16"}
    assert t.adjust_makevars(dict(llvm), {"CC": "clang-16"}) == {
        "ARCH": "x86_64",
        "LLVM": "-16",
        "CC": "clang-16",
    }  # the user's own CC= stays
    gcc = {"ARCH": "x86_64", "CC": "gcc", "HOSTCC": "gcc"}
    assert t.adjust_makevars(dict(gcc), {}) == gcc
    assert Target.load("kernel").adjust_makevars(dict(llvm), {}) == llvm


def test_kselftest_judge(tmp_path):
    t = Target.load("kselftest")
    err = "tools/testing/selftests/size/get_size.c: get_size.c:3:1: error: bad"
    assert t.judge(Status.PASS, "", [], [err], tmp_path) == (
        Status.FAIL,
        "make kselftest-install: nothing was installed",
    )
    assert t.judge(
        Status.FAIL, "tar -caf failed", ["make kselftest-install exited 2"], [], tmp_path
    ) == (Status.FAIL, "make kselftest-install exited 2: nothing was installed")
    (tmp_path / "kselftest_install").mkdir()
    (tmp_path / "kselftest_install" / "run_kselftest.sh").write_text("")
    assert t.judge(Status.PASS, "", [], [], tmp_path) == (Status.PASS, "")
    assert t.judge(Status.PASS, "", [], [err], tmp_path) == (
        Status.WARNING,
        "kselftest installed with problems (test dirs that did not build: size)",
    )
    assert t.judge(Status.PASS, "", ["make kselftest-install exited 2"], [], tmp_path) == (
        Status.WARNING,
        "kselftest installed with problems (errors in the log)",
    )
    assert t.tolerates(["make", "kselftest-install"]) and not t.tolerates(["tar", "-caf"])
    assert not Target.load("kernel").tolerates(["make", "bzImage"])


def test_binrpm_pkg_skips_without_rpmbuild():
    assert dict(Target.load("binrpm-pkg").skip_without) == {"rpmbuild": "rpm"}
    assert all(not Target.load(n).skip_without for n in TARGETS if n != "binrpm-pkg")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("order: 90\nkind: shell\n", "kind 'shell' is none of commands, config, kselftest"),
        ("order: 91\npackages: [1]\n", "'packages' must be a list of Debian package names"),
        ("order: 92\nskip_without: {rpmbuild: 1}\n", "'skip_without' must map tool names"),
    ],
)
def test_bad_kind_packages_skip_without(data_dir, body, message):
    path = data_dir / "target" / "bad.yaml"
    path.write_text(body)
    with pytest.raises(DefinitionError) as exc:
        Target.load("bad")
    assert str(exc.value).startswith(f"{path}: {message}")


def test_every_kind_a_target_may_name_has_one_runner():
    assert set(steps.RUNNERS) == set(targets.KINDS)


def test_a_targets_own_limit_caps_the_runs_timeout(tmp_path):
    from fakes import make_tree

    from pytest_kbuild.build.build import Build

    b = Build(make_tree(tmp_path / "t"), arch="x86_64", timeout=1000, target_timeouts={"kunit": 9})
    assert Target.load("boot").timeout == 300
    assert (b.timeout_of("boot"), b.timeout_of("kunit"), b.timeout_of("kernel")) == (300, 9, 1000)
    assert Build(make_tree(tmp_path / "u"), arch="x86_64", timeout=60).timeout_of("boot") == 60
    assert Build(make_tree(tmp_path / "v"), arch="x86_64").timeout_of("kernel") is None


@pytest.mark.parametrize("value", ["-5", "0", "true", "soon"])
def test_a_timeout_that_is_no_seconds_is_a_definition_error(data_dir, value):
    name = f"badtimeout{hashlib.sha256(value.encode()).hexdigest()[:8]}"
    (data_dir / "target" / f"{name}.yaml").write_text(f"order: 9\ntimeout: {value}\n")
    with pytest.raises(DefinitionError) as exc:
        Target.load(name)
    assert "'timeout' must be" in str(exc.value)
