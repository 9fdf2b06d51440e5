"""workdirs.py: sizes and free space as a full-disk message gives them."""

from __future__ import annotations

import shutil

from pytest_kbuild import workdirs


def test_sizes_read_as_people_write_them():
    assert workdirs.size(0) == "0 bytes"
    assert workdirs.size(1023) == "1023 bytes"
    assert workdirs.size(45056) == "44.0 KB"
    assert workdirs.size(3 * 1024**3 + 1024**3 // 10) == "3.1 GB"
    assert workdirs.size(5 * 1024**4) == "5.0 TB"


def test_free_space_names_each_file_system_once(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    said = workdirs.free_space({"build dir": a, "results dir": b, "none": None})
    assert said.startswith(f"build dir {a}: ") and said.endswith(" free")
    assert "results dir" not in said  # the same file system as the build dir
    assert workdirs.size(shutil.disk_usage(a).free).split()[1] in said


def test_used_bytes_counts_what_files_take(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x" * 10000)
    assert workdirs.used_bytes(tmp_path) >= 10000
    assert workdirs.used_bytes(tmp_path / "missing") == 0
