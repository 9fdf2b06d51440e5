"""workdirs.py: sizes and free space as a full-disk message gives them."""

from __future__ import annotations

import shutil

import pytest

from pytest_kbuild.build import workdirs
from pytest_kbuild.errors import KbuildInfraError
from pytest_kbuild.run import runlock


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


def test_the_space_reserve_makes_room_for_the_last_metadata_on_a_full_disk(tmp_path):
    from tests.support import fill, small_disk

    with small_disk(tmp_path / "disk") as disk:
        reserve = workdirs.SpaceReserve(disk)
        reserve.take()
        assert reserve.held and reserve.path.stat().st_blocks * 512 >= reserve.BYTES
        fill(disk, 0)
        with pytest.raises(OSError, match="No space left"):
            (disk / "metadata.json").write_bytes(b"x" * 100_000)
        assert reserve.give_back() and not reserve.path.exists()
        (disk / "metadata.json").write_bytes(b"x" * 100_000)
        assert not reserve.give_back()  # once


def test_no_room_to_reserve_holds_nothing(tmp_path):
    from tests.support import fill, small_disk

    with small_disk(tmp_path / "disk") as disk:
        fill(disk, 0)
        reserve = workdirs.SpaceReserve(disk)
        reserve.take()
        assert not reserve.held and not reserve.path.exists()


def test_a_given_build_dir_is_locked_then_emptied_or_kept(tmp_path):
    build_dir = tmp_path / "b" / "m" / "x86_64-gcc-tinyconfig"
    lock = workdirs.lock_build_dir(build_dir, "x86_64-gcc-tinyconfig")
    (build_dir / "init").mkdir()
    (build_dir / "init" / "main.o").write_text("object")
    (build_dir / ".config").write_text("CONFIG_X=y\n")
    assert workdirs.make_build_dir(build_dir, "x", keep=True) == build_dir
    assert (build_dir / "init" / "main.o").is_file()  # used again
    workdirs.make_build_dir(build_dir, "x", keep=False)
    # emptied, but the lock this build holds stays
    assert [p.name for p in build_dir.iterdir()] == [runlock.BUILD_LOCK]
    with pytest.raises(runlock.BuildDirInUse):
        workdirs.lock_build_dir(build_dir, "x86_64-gcc-tinyconfig")
    lock.release()
    assert list(build_dir.iterdir()) == []


def test_a_build_dir_that_cannot_be_made_names_it(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(KbuildInfraError, match="cannot prepare the build dir .*/f/b"):
        workdirs.lock_build_dir(tmp_path / "f" / "b", "x")
