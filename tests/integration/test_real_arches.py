"""The arches added for issue 14 on Debian's real linux-source-6.1 tree.

CI builds one of them for real: user-mode Linux, native and the cheapest. The
others (alpha, armel, m68k, parisc64, hexagon, mips64, powerpc64/le) were
built by hand with the same command; their data is unit-tested.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.integration.test_cli_api_fakelinux import kbuild
from tests.support import require_tools

pytestmark = pytest.mark.realkernel


def test_um_tinyconfig_is_a_linux_program_that_runs(linux_tree, tmp_path):
    require_tools("gcc", "file")
    out = tmp_path / "out"
    args = ["-a", "um", "-t", "gcc", "-k", "tinyconfig", "-j2", "-o", str(out), "config", "kernel"]
    proc = kbuild(linux_tree, *args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    linux = out / "linux"
    desc = subprocess.run(["file", "-b", str(linux)], capture_output=True, text=True).stdout
    assert desc.startswith("ELF 64-bit LSB"), desc
    assert "x86-64" in desc and "executable" in desc, desc
    config = (out / "config").read_text()
    assert "CONFIG_UML=y\n" in config and "CONFIG_64BIT=y\n" in config
    # A UML kernel is a host program: it says its version without booting.
    assert os.access(linux, os.X_OK)
    version = subprocess.run([str(linux), "--version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith("6.1."), version
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "PASS"
    assert meta["makevars"]["ARCH"] == "um" and meta["makevars"]["SUBARCH"] == "x86_64"
    assert "CROSS_COMPILE" not in meta["makevars"]
    assert meta["artifacts"]["linux"]["target"] == "kernel"
