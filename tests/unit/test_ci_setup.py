""".ci/setup installs every host tool the targets and arches declare (issue 10:
a fresh Debian 12 has no rsync, which headers_install runs)."""

import re

from pytest_kbuild import definitions
from pytest_kbuild.definitions.arch import Arch
from pytest_kbuild.definitions.targets import Target
from tests.support import ROOT


def setup_packages(name="PACKAGES"):
    text = (ROOT / ".ci" / "setup").read_text()
    m = re.search(rf"^{name}=\((.*?)^\)", text, re.S | re.M)
    assert m, f".ci/setup has no {name}=( ... ) list"
    return set(m.group(1).split())


def test_setup_installs_every_target_host_tool():
    wanted = {}
    for name in definitions.available("target"):
        t = Target.load(name)
        for tools in [t.host_tools, *t.config_tools.values()]:
            wanted.update({package: name for package in tools.values()})
        wanted.update({package: name for package in [*t.packages, *t.skip_without.values()]})
    assert "rsync" in wanted
    packages = setup_packages()
    assert {p: t for p, t in wanted.items() if p not in packages} == {}


def test_setup_installs_the_host_tools_of_every_arch_file():
    wanted = {p for a in definitions.available("arch") for p in Arch.load(a).host_tools.values()}
    assert "u-boot-tools" in wanted
    assert wanted - setup_packages() == set()
