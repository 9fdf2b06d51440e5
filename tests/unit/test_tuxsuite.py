"""data/tuxsuite.yaml, read by tuxsuite.py."""

import pytest

from pytest_kbuild import definitions
from pytest_kbuild.errors import DefinitionError
from pytest_kbuild.matrix import tuxsuite


def test_rules_file_is_checked(tmp_path):
    bad = tmp_path / "tuxsuite.yaml"
    bad.write_text("arches: [arm]\n")
    with pytest.raises(DefinitionError, match="not a valid TuxSuite rules file"):
        tuxsuite.rules(bad)


def test_rules_name_only_real_arches_targets_and_toolchains():
    r = tuxsuite.rules()
    assert {"arm64", "x86_64", "hexagon"} <= r.arches
    assert "default" in r.targets
    assert set(r.devices.values()) <= r.arches


def test_every_runs_on_and_device_names_what_pytest_kbuild_knows():
    r = tuxsuite.rules()
    for device, arch in r.devices.items():
        assert device.startswith("qemu-")
        assert arch in definitions.available("arch") or arch == "m68k", device
    # TuxMake's targets: ours where we have them; the rest (dtbs-legacy,
    # kselftest-merge) become SKIP items. Ours also has targets TuxMake lacks.
    ours = set(definitions.available("target"))
    assert {"config", "kernel", "kselftest", "perf", "cpupower", "default"} <= r.targets
    assert r.targets - ours == {"default", "dtbs-legacy", "kselftest-merge"}
