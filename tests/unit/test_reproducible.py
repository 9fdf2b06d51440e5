import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_kbuild.build import reproducible
from pytest_kbuild.build.reproducible import (
    FROM_GIT,
    FROM_MTIME,
    format_timestamp,
    parse_timestamp,
    plan,
    tree_timestamp,
)

EPOCH = 1_700_000_000
STAMP = "Tue Nov 14 22:13:20 UTC 2023"


@pytest.fixture
def tree(tmp_path):
    t = tmp_path / "linux"
    t.mkdir()
    (t / "Makefile").write_text("VERSION = 6\n")
    os.utime(t / "Makefile", (EPOCH, EPOCH))
    return t


def make_plan(tree, **kw):
    kw.setdefault("enabled", True)
    kw.setdefault("make_variables", {})
    kw.setdefault("env", {})
    kw.setdefault("environment", {})
    return plan(tree, **kw)


# -- the timestamp -------------------------------------------------------------------------------


def test_timestamp_is_formatted_as_date_prints_it():
    assert format_timestamp(EPOCH) == STAMP
    assert format_timestamp(0) == "Thu Jan  1 00:00:00 UTC 1970"


@pytest.mark.parametrize(
    ("text", "epoch"),
    [
        (STAMP, EPOCH),
        ("@1700000000", EPOCH),
        ("Tue May 26 16:16:14 2020 -0500", 1590527774),
        ("2023-11-14T22:13:20+00:00", EPOCH),
        ("2023-11-14 22:13:20", EPOCH),
        ("Tue, 14 Nov 2023 22:13:20 +0000", EPOCH),
        ("not a date at all", None),
    ],
)
def test_a_users_timestamp_is_read_for_the_tarballs_mtime(text, epoch):
    assert parse_timestamp(text) == epoch


@pytest.mark.skipif(shutil.which("date") is None, reason="no date(1)")
def test_what_date_reads_is_the_last_resort():
    assert parse_timestamp("14 Nov 2023 22:13:20 UTC") == EPOCH


def test_a_tree_without_git_is_dated_by_its_makefile(tree):
    assert tree_timestamp(tree) == (EPOCH, FROM_MTIME)


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_a_git_tree_is_dated_by_its_head_commit(tree):
    env = {
        **os.environ,
        "GIT_COMMITTER_DATE": "@1600000000 +0000",
        "GIT_AUTHOR_DATE": "@1500000000 +0000",
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@example.org",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@example.org",
    }
    for argv in (["init", "-q"], ["add", "Makefile"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", "-C", str(tree), *argv], check=True, env=env)
    assert tree_timestamp(tree) == (1_600_000_000, FROM_GIT)
    p = make_plan(tree)
    assert p.values["KBUILD_BUILD_TIMESTAMP"] == format_timestamp(1_600_000_000)
    assert p.reproducer_env() == {}  # every clone of the commit gives this date


def test_a_tree_without_makefile_or_git_is_dated_1970(tmp_path):
    assert tree_timestamp(tmp_path)[0] == 0


# -- the variables -------------------------------------------------------------------------------


def test_defaults(tree, tmp_path):
    build = tmp_path / "b"
    p = make_plan(tree)
    env = p.environment(tree, build)
    flags = f"-fdebug-prefix-map={build}=. -fdebug-prefix-map={tree}=."
    assert env == {
        "KBUILD_BUILD_TIMESTAMP": STAMP,
        "KBUILD_BUILD_USER": "kbuild",
        "KBUILD_BUILD_HOST": "kbuild",
        "KCFLAGS": flags,
        "KAFLAGS": flags,
        "TAR_OPTIONS": "--sort=name --format=gnu --owner=0 --group=0 --numeric-owner "
        "--mode=go=rX,u+rw --mtime=@1700000000",
        "XZ_OPT": "-T1",
    }
    assert p.makevars(tree, build) == {}
    assert p.reproducer_env() == {"KBUILD_BUILD_TIMESTAMP": STAMP}
    record = p.record(tree, build)
    assert record["enabled"] is True and record["epoch"] == EPOCH
    assert record["variables"] == dict(sorted(env.items()))
    assert record["sources"]["KBUILD_BUILD_TIMESTAMP"] == FROM_MTIME
    assert record["sources"]["KBUILD_BUILD_USER"] == "default"


def test_prefix_map_puts_the_longest_path_last(tmp_path):
    tree = tmp_path / "t"
    (tree).mkdir()
    build = tmp_path / "a-much-longer-build-dir"
    flags = make_plan(tree).flags(tree, build)
    assert flags == f"-fdebug-prefix-map={tree}=. -fdebug-prefix-map={build}=."


def test_prefix_map_leaves_out_the_build_dir_for_a_wrapper_that_hashes_it(tree, tmp_path):
    p = make_plan(tree, map_build_dir=False)
    assert p.environment(tree, tmp_path / "b")["KCFLAGS"] == f"-fdebug-prefix-map={tree}=."


def test_before_the_build_dir_exists_only_the_tree_is_mapped(tree):
    assert make_plan(tree).flags(tree, None) == f"-fdebug-prefix-map={tree}=."


@pytest.mark.parametrize("where", ["env", "environment"])
def test_users_values_win_from_the_build_env_and_the_environment(tree, tmp_path, where):
    build = tmp_path / "b"
    given = {
        "KBUILD_BUILD_TIMESTAMP": "@42",
        "KBUILD_BUILD_USER": "me",
        "KCFLAGS": "-O2",
        "TAR_OPTIONS": "--mtime=@7",
        "XZ_OPT": "-T0",
    }
    p = make_plan(tree, **{where: given})
    env = p.environment(tree, build)
    assert env["KBUILD_BUILD_TIMESTAMP"] == "@42" and env["KBUILD_BUILD_USER"] == "me"
    assert env["KBUILD_BUILD_HOST"] == "kbuild"
    assert env["KCFLAGS"] == f"-O2 {p.flags(tree, build)}"  # appended, not clobbered
    assert env["KAFLAGS"] == p.flags(tree, build)
    # The user's tar options come last (tar's later options win); XZ_OPT is theirs.
    assert env["TAR_OPTIONS"].endswith("--mtime=@42 --mtime=@7")
    assert env["XZ_OPT"] == "-T0"
    assert p.epoch == 42 and p.reproducer_env() == {}
    sources = p.record(tree, build)["sources"]
    assert sources["KBUILD_BUILD_TIMESTAMP"] == where
    assert sources["KCFLAGS"] == f"{where} + prefix map"


def test_make_variables_win_over_env_and_go_on_makes_command_line(tree, tmp_path):
    build = tmp_path / "b"
    p = make_plan(
        tree,
        make_variables={"KBUILD_BUILD_TIMESTAMP": STAMP, "KCFLAGS": "-O2"},
        env={"KBUILD_BUILD_TIMESTAMP": "@1", "KCFLAGS": "-O3"},
    )
    env = p.environment(tree, build)
    assert "KBUILD_BUILD_TIMESTAMP" not in env and "KCFLAGS" not in env
    assert p.makevars(tree, build) == {"KCFLAGS": f"-O2 {p.flags(tree, build)}"}
    assert p.record(tree, build)["variables"]["KBUILD_BUILD_TIMESTAMP"] == STAMP
    assert p.epoch == EPOCH


def test_m68k_gets_kgzip_without_name_and_mtime_on_makes_command_line(tree, tmp_path):
    build = tmp_path / "b"
    p = make_plan(tree, arch="m68k")
    assert p.makevars(tree, build) == {"KGZIP": "gzip -n"}
    assert "KGZIP" not in p.environment(tree, build)  # the Makefile's KGZIP = gzip beats env
    record = p.record(tree, build)
    assert record["variables"]["KGZIP"] == "gzip -n"
    assert record["sources"]["KGZIP"] == "default for arch m68k"
    # other arches, and reproducible mode off, set nothing of the kind
    assert "KGZIP" not in make_plan(tree, arch="x86_64").record(tree, build)["variables"]
    assert make_plan(tree, arch="m68k", enabled=False).makevars(tree, build) == {}


@pytest.mark.parametrize("where", ["make_variables", "env", "environment"])
def test_a_users_kgzip_wins_on_m68k(tree, tmp_path, where):
    p = make_plan(tree, arch="m68k", **{where: {"KGZIP": "pigz"}})
    assert "KGZIP" not in p.makevars(tree, tmp_path)
    assert "KGZIP" not in p.record(tree, tmp_path)["variables"]


def test_every_arch_with_make_variables_is_an_arch_file():
    from pytest_kbuild import definitions

    arches = reproducible.defaults().arch_makevars
    assert arches["m68k"] == {"KGZIP": "gzip -n"}
    assert set(arches) <= set(definitions.available("arch"))


def test_an_unreadable_user_timestamp_keeps_the_trees_for_the_tarballs(tree):
    p = make_plan(tree, env={"KBUILD_BUILD_TIMESTAMP": "whenever"})
    assert p.values["KBUILD_BUILD_TIMESTAMP"] == "whenever" and p.epoch == EPOCH


def test_off_sets_nothing(tree, tmp_path):
    p = make_plan(tree, enabled=False, environment={"KCFLAGS": "-O2"})
    assert p.environment(tree, tmp_path) == {} and p.makevars(tree, tmp_path) == {}
    assert p.reproducer_env() == {}
    assert p.record(tree, tmp_path) == {
        "enabled": False,
        "variables": {},
        "sources": {},
        "epoch": None,
    }


def test_the_data_file_is_read_once():
    d = reproducible.defaults()
    assert d.variables == {"KBUILD_BUILD_USER": "kbuild", "KBUILD_BUILD_HOST": "kbuild"}
    assert d.flag_variables == ("KCFLAGS", "KAFLAGS")
    assert reproducible.defaults() is d


# -- deterministic tarballs ----------------------------------------------------------------------

needs_tar = pytest.mark.skipif(
    shutil.which("tar") is None or shutil.which("xz") is None, reason="no tar or xz"
)


def populate(root: Path, names: list[str], mtime: int, mode: int) -> None:
    """The same files, made in the order of *names*, with other mtimes and modes."""
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"content of {name}\n")
        path.chmod(mode)
    for path in [*root.rglob("*"), root]:
        os.utime(path, (mtime, mtime))


def pack(tmp_path: Path, name: str, files: list[str], mtime: int, env: dict) -> str:
    """The headers target's command (tar -caf OUT -C DIR .) with *env*."""
    src = tmp_path / name
    populate(src, files, mtime, 0o664 if name.endswith("1") else 0o644)
    if os.geteuid() == 0 and name.endswith("2"):
        for path in [*src.rglob("*"), src]:
            os.chown(path, 1234, 5678)  # another owner
    out = tmp_path / f"{name}.tar.xz"
    argv = ["tar", "-caf", str(out), "-C", str(src), "."]
    subprocess.run(argv, check=True, env={**os.environ, **env})
    return hashlib.sha256(out.read_bytes()).hexdigest()


FILES = ["include/linux/a.h", "include/asm/b.h", "include/linux/c.h", "z.h", "m/n/o.h"]


@needs_tar
def test_tar_with_reproducible_mode_writes_the_same_bytes(tree, tmp_path):
    env = make_plan(tree).environment(tree, tmp_path / "b")
    one = pack(tmp_path, "src1", FILES, 1_600_000_000, env)
    two = pack(tmp_path, "src2", list(reversed(FILES)), 1_650_000_000, env)
    assert one == two
    listing = subprocess.run(
        ["tar", "-tvJf", str(tmp_path / "src1.tar.xz")], capture_output=True, text=True
    ).stdout.splitlines()
    names = [line.split()[-1] for line in listing]
    assert names == sorted(names)
    assert all(" 0/0 " in line and "2023-11-14 22:13" in line for line in listing)


@needs_tar
def test_tar_without_reproducible_mode_differs(tree, tmp_path):
    # The test above can fail: the same trees give other bytes without it.
    env = {"TAR_OPTIONS": "", "XZ_OPT": ""}
    one = pack(tmp_path, "src1", FILES, 1_600_000_000, env)
    two = pack(tmp_path, "src2", list(reversed(FILES)), 1_650_000_000, env)
    assert one != two
