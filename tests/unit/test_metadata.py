import datetime
import os
import platform

import pytest
from fakes import make_tree

from pytest_kbuild import metadata
from pytest_kbuild.metadata import kernelversion, tree_info


@pytest.mark.parametrize(
    ("makefile", "version"),
    [
        ("VERSION = 6\nPATCHLEVEL = 8\nSUBLEVEL = 0\nEXTRAVERSION = -rc3\n", "6.8.0-rc3"),
        ("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 77\nEXTRAVERSION =\nNAME = x\n", "6.1.77"),
        ("VERSION=5\nPATCHLEVEL\t=\t15\n", "5.15.0"),
        ("# no version\nall:\n", None),
    ],
)
def test_kernelversion(tmp_path, makefile, version):
    assert kernelversion(make_tree(tmp_path / "t", makefile)) == version


def test_kernelversion_without_makefile(tmp_path):
    assert kernelversion(tmp_path) is None


def test_tree_info_from_git(kernel_tree, fake_runtime):
    (kernel_tree / ".git").mkdir()
    fake_runtime.capture_outputs[f"git -C {kernel_tree} describe --always --dirty"] = (
        0,
        "v6.8-rc3-2-gabcdef\n",
    )
    fake_runtime.capture_outputs[f"git -C {kernel_tree} rev-parse HEAD"] = (128, "fatal\n")
    assert tree_info(kernel_tree, fake_runtime) == {
        "path": str(kernel_tree),
        "kernelversion": "6.8.0-rc3",
        "git": {"describe": "v6.8-rc3-2-gabcdef", "commit": None},
    }


def test_tree_info_without_git(kernel_tree, fake_runtime):
    assert tree_info(kernel_tree, fake_runtime) == {
        "path": str(kernel_tree),
        "kernelversion": "6.8.0-rc3",
    }
    assert fake_runtime.captures == []


def test_host_info():
    info = metadata.host_info()
    assert info["hostname"] == platform.node()
    assert info["machine"] == platform.machine()
    assert info["python"] == platform.python_version()
    assert info["cpus"] == os.cpu_count()
    assert info["os"] is None or isinstance(info["os"], str)


def test_now_is_utc_seconds():
    t = datetime.datetime.fromisoformat(metadata.now())
    assert t.utcoffset() == datetime.timedelta(0)
    assert t.microsecond == 0
