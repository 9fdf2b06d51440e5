import base64
import os

import pytest

from pytest_kbuild.errors import KbuildInfraError
from pytest_kbuild.run import transfer


def test_pack_and_unpack_a_build_folder_keeping_big_files_back(tmp_path):
    folder = tmp_path / "worker" / "m" / "x86_64-gcc-defconfig"
    folder.mkdir(parents=True)
    (folder / "build.log").write_bytes(b"x" * 100)  # always sent, whatever its size
    (folder / "metadata.json").write_text("{}")
    (folder / "config").write_text("CONFIG_X=y\n")
    (folder / "vmlinux.xz").write_bytes(b"\xfd7zXZ" * 40)
    data = transfer.pack(tmp_path / "worker", folder, max_bytes=50)
    assert data["folder"] == "m/x86_64-gcc-defconfig"
    assert sorted(data["files"]) == ["build.log", "config", "metadata.json"]
    assert data["left"] == {"vmlinux.xz": 200}
    home = transfer.unpack(data, tmp_path / "home")
    assert home == tmp_path / "home/m/x86_64-gcc-defconfig"
    assert (home / "build.log").read_bytes() == b"x" * 100
    assert (home / "config").read_text() == "CONFIG_X=y\n"
    assert not (home / "vmlinux.xz").exists()


@pytest.mark.parametrize(
    ("folder", "name", "message"),
    [
        ("../../etc", "passwd", "bad folder '../../etc'"),
        ("/etc/x", "passwd", "bad folder '/etc/x'"),
        ("m/b", "../../escape", "bad file name '../../escape'"),
    ],
)
def test_unpack_refuses_paths_outside_the_results_dir(tmp_path, folder, name, message):
    data = {"folder": folder, "files": {name: base64.b64encode(b"x").decode()}, "left": {}}
    with pytest.raises(KbuildInfraError, match=message.replace(".", r"\.")):
        transfer.unpack(data, tmp_path)


def test_reproducer_sh_stays_executable(tmp_path):
    folder = tmp_path / "worker" / "m" / "b"
    folder.mkdir(parents=True)
    (folder / "reproducer.sh").write_text("#!/bin/sh\nexec kbuild\n")
    (folder / "reproducer.sh").chmod(0o755)
    home = transfer.unpack(transfer.pack(tmp_path / "worker", folder), tmp_path / "home")
    assert os.access(home / "reproducer.sh", os.X_OK)
