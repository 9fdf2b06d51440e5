import os
from pathlib import Path

import pytest

from pytest_kbuild import options
from pytest_kbuild.errors import KbuildError, KbuildUserError, ShardError
from pytest_kbuild.options import (
    BUILD_OPTIONS,
    BY_NAME,
    ENV_PREFIX,
    OPTIONS,
    BuildOptions,
    RunOptions,
    reproducer_args,
)
from pytest_kbuild.run.shard import Shard
from pytest_kbuild.settings import Settings, build_settings, resolve, where


def test_option_names():
    o = BY_NAME["keep_build_dir"]
    assert o.cli == "--kbuild-keep-build-dir"
    assert o.env == "PYTEST_KBUILD_KEEP_BUILD_DIR"
    assert o.ini == "kbuild_keep_build_dir"


def test_options_are_consistent():
    assert ENV_PREFIX == "PYTEST_KBUILD_"
    assert len({o.name for o in OPTIONS}) == len(OPTIONS)
    for o in OPTIONS:
        assert o.help
        assert o.cli.startswith("--kbuild-")
        assert not o.env.startswith("KBUILD_")
        assert BY_NAME[o.name] is o
    declared = set(RunOptions.__dataclass_fields__) | set(BuildOptions.__dataclass_fields__)
    assert {o.name for o in OPTIONS} == declared
    for o in BUILD_OPTIONS:
        assert o.kbuild and all(f.startswith("-") for f in o.kbuild), o.name


JOBS = BY_NAME["jobs"]


@pytest.mark.parametrize(
    ("cli", "env", "ini", "expected"),
    [
        ("4", {"PYTEST_KBUILD_JOBS": "3"}, "2", (4, "cli")),
        (None, {"PYTEST_KBUILD_JOBS": "3"}, "2", (3, "env")),
        (None, {"PYTEST_KBUILD_JOBS": ""}, "2", (2, "ini")),
        (None, {}, "2", (2, "ini")),
        (None, {}, None, (None, "default")),
        (None, {}, "", (None, "default")),
    ],
)
def test_precedence_cli_env_ini_default(cli, env, ini, expected):
    assert resolve(JOBS, cli, env, ini) == expected


def test_defaults():
    assert resolve(BY_NAME["results"], None, {}, None) == (Path("kbuild-results"), "default")
    assert resolve(BY_NAME["fail_fast"], None, {}, None) == (False, "default")
    assert resolve(BY_NAME["matrix"], None, {}, None) == ((), "default")


@pytest.mark.parametrize(
    ("source", "args", "where"),
    [
        ("cli", ("x", {}, None), "--kbuild-jobs"),
        ("env", (None, {"PYTEST_KBUILD_JOBS": "x"}, None), "PYTEST_KBUILD_JOBS"),
        ("ini", (None, {}, "x"), "kbuild_jobs"),
    ],
)
def test_parse_errors_name_their_source(source, args, where):
    with pytest.raises(KbuildUserError) as exc:
        resolve(JOBS, *args)
    assert str(exc.value) == f"{where}: 'x' is not a positive whole number"


@pytest.mark.parametrize("value", ["0", "-2", "1.5", "four"])
def test_jobs_must_be_positive_whole(value):
    with pytest.raises(KbuildUserError, match=rf"^--kbuild-jobs: '{value}' is not a positive"):
        resolve(JOBS, value, {}, None)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("1", True),
        ("true", True),
        ("Yes", True),
        (" on ", True),
        ("0", False),
        ("off", False),
        ("NO", False),
    ],
)
def test_flag_from_env_and_ini(raw, value):
    opt = BY_NAME["keep_build_dir"]
    assert resolve(opt, None, {opt.env: raw}, None) == (value, "env")
    assert resolve(opt, None, {}, raw) == (value, "ini")


def test_flag_on_cli():
    opt = BY_NAME["fail_fast"]
    assert resolve(opt, True, {opt.env: "0"}, "0") == (True, "cli")
    assert resolve(opt, False, {opt.env: "1"}, None) == (True, "env")


def test_bad_boolean():
    opt = BY_NAME["fail_fast"]
    with pytest.raises(KbuildUserError) as exc:
        resolve(opt, None, {opt.env: "maybe"}, None)
    assert str(exc.value) == (
        "PYTEST_KBUILD_FAIL_FAST: 'maybe' is not a boolean; "
        "accepted: 1/0, true/false, yes/no, on/off"
    )


def test_cache_remote_is_a_url_from_any_source():
    opt = BY_NAME["cache_remote"]
    assert opt.cli == "--kbuild-cache-remote" and opt.env == "PYTEST_KBUILD_CACHE_REMOTE"
    url = "redis://127.0.0.1:6379"
    assert resolve(opt, None, {opt.env: url}, None) == (url, "env")
    assert resolve(opt, None, {}, url) == (url, "ini")
    assert (
        build_settings(_raw(cache_remote=(url, "env")), Path("/i"), Path("/j")).build.cache_remote
        == url
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("127.0.0.1:6379", "127.0.0.1:6379"),
        ("redis://", "redis://"),
        ("://host", "://host"),
    ],
)
def test_cache_remote_must_be_a_url(value, shown):
    opt = BY_NAME["cache_remote"]
    with pytest.raises(KbuildUserError) as exc:
        resolve(opt, None, {opt.env: value}, None)
    assert str(exc.value) == (
        f"PYTEST_KBUILD_CACHE_REMOTE: {shown!r} is not a URL like redis://HOST:PORT"
    )


def test_text_is_stripped_and_must_not_be_empty():
    opt = BY_NAME["tree"]
    assert resolve(opt, " /src/linux ", {}, None) == ("/src/linux", "cli")
    with pytest.raises(KbuildUserError) as exc:
        resolve(opt, None, {opt.env: "  "}, None)
    assert str(exc.value) == "PYTEST_KBUILD_TREE: empty value"


def test_multiple_values():
    opt = BY_NAME["matrix"]
    assert resolve(opt, ["a.yaml", "b.yaml"], {}, None) == (["a.yaml", "b.yaml"], "cli")
    env = {opt.env: f"a.yaml{os.pathsep}{os.pathsep}b.yaml"}
    assert resolve(opt, [], env, None) == (["a.yaml", "b.yaml"], "env")
    assert resolve(opt, None, {}, "a.yaml\n  b.yaml") == (["a.yaml", "b.yaml"], "ini")


def test_each_setting_declares_its_ini_type():
    # From the declaration, not a second table: lists, booleans, else one string.
    types = {o.name: o.ini_type for o in OPTIONS}
    assert {n for n, t in types.items() if t == "args"} == {"matrix", "plan_job"}
    assert {n for n, t in types.items() if t == "bool"} == {
        "fail_fast",
        "keep_build_dir",
        "verbose",
        "reproducible",
    }
    assert set(types.values()) == {"args", "bool", "string"}


@pytest.mark.parametrize(
    "ini",
    [
        ["a.yaml", "b.yaml"],  # a TOML array, or "args" split as in a shell
        [f"a.yaml{os.pathsep}b.yaml"],  # one item, separated as --help says
        ["a.yaml", f"{os.pathsep}b.yaml{os.pathsep}"],
        "a.yaml b.yaml",  # a string, as a caller other than pytest may pass
    ],
)
def test_a_list_from_the_ini_file(ini):
    opt = BY_NAME["matrix"]
    assert resolve(opt, None, {}, ini) == (["a.yaml", "b.yaml"], "ini")


def test_a_bool_from_the_ini_file():
    # pytest gives a bool for a "bool" ini key; False is a value, not "unset".
    for name in ("fail_fast", "reproducible"):
        opt = BY_NAME[name]
        assert resolve(opt, None, {}, True) == (True, "ini")
        assert resolve(opt, None, {}, False) == (False, "ini")
    assert resolve(BY_NAME["reproducible"], None, {}, None) == (True, "default")


def test_a_list_where_one_value_is_accepted():
    opt = BY_NAME["tree"]
    with pytest.raises(KbuildUserError) as exc:
        resolve(opt, None, {}, ["a", "b"])
    assert str(exc.value) == "kbuild_tree: ['a', 'b'] is a list; accepted: one value, a string"


def _raw(**over):
    raw = {o.name: (o.default, "default") for o in OPTIONS}
    raw.update(over)
    return raw


def test_build_settings_defaults(tmp_path):
    s = build_settings(_raw(), tmp_path / "inv", tmp_path / "ini")
    assert s.run == RunOptions(
        matrix=(),
        tree=None,
        results=(tmp_path / "inv" / "kbuild-results").resolve(),
        build_dir=None,
        jobserver="auto",
        runtime=None,
        shard=None,
        durations=None,
    )
    assert s.build == BuildOptions()
    assert s.build.pull == "missing" and s.build.network == "none" and s.build.jobs is None


def test_build_settings_relative_paths_follow_their_source(tmp_path):
    inv, ini = tmp_path / "inv", tmp_path / "ini"
    for d in (inv, ini):
        d.mkdir()
        (d / "m.yaml").write_text("{}")
    s = build_settings(
        _raw(
            matrix=(["m.yaml"], "ini"),
            tree=("linux", "ini"),
            results=("res", "env"),
            build_dir=("/abs/build", "cli"),
            cache_dir=("cache", "cli"),
            durations=("d.json", "ini"),
            jobs=(8, "env"),
            keep_build_dir=(True, "cli"),
        ),
        inv,
        ini,
    )
    assert s.run.matrix == ((ini / "m.yaml").resolve(),)
    assert s.run.tree == (ini / "linux").resolve()
    assert s.run.results == (inv / "res").resolve()
    assert s.run.build_dir == Path("/abs/build")
    assert s.build.cache_dir == (inv / "cache").resolve()
    assert s.run.durations == (ini / "d.json").resolve()
    assert s.build.jobs == 8
    assert s.build.keep_build_dir is True
    assert s.where("tree") == "kbuild_tree" and s.where("jobs") == "PYTEST_KBUILD_JOBS"
    s = build_settings(_raw(matrix=(["m.yaml"], "cli")), inv, ini)
    assert s.run.matrix == ((inv / "m.yaml").resolve(),)


@pytest.mark.parametrize(
    ("source", "where"),
    [("cli", "--kbuild-matrix"), ("env", "PYTEST_KBUILD_MATRIX"), ("ini", "kbuild_matrix")],
)
def test_missing_matrix_names_option_and_path(tmp_path, source, where):
    with pytest.raises(KbuildUserError) as exc:
        build_settings(_raw(matrix=(["nope.yaml"], source)), tmp_path, tmp_path)
    assert str(exc.value) == (
        f"{where}: matrix file {str((tmp_path / 'nope.yaml').resolve())!r} does not exist"
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("2/4", {"PYTEST_KBUILD_SHARD": "1/4"}, "3/4"), (Shard(2, 4), "cli")),
        ((None, {"PYTEST_KBUILD_SHARD": "1/4"}, "3/4"), (Shard(1, 4), "env")),
        ((None, {}, "3/4"), (Shard(3, 4), "ini")),
        ((None, {}, None), (None, "default")),
    ],
)
def test_shard_option_precedence(args, expected):
    assert resolve(BY_NAME["shard"], *args) == expected


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (("0/4", {}, None), "--kbuild-shard"),
        ((None, {"PYTEST_KBUILD_SHARD": "4"}, None), "PYTEST_KBUILD_SHARD"),
        ((None, {}, "5/4"), "kbuild_shard"),
    ],
)
def test_bad_shard_names_its_source(args, where):
    with pytest.raises(ShardError, match=rf"^{where}: '.*'.*; accepted: I/N with 1 <= I <= N"):
        resolve(BY_NAME["shard"], *args)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("cli", "--kbuild-durations"),
        ("env", "PYTEST_KBUILD_DURATIONS"),
        ("ini", "kbuild_durations"),
        ("default", "--kbuild-durations"),
    ],
)
def test_where_names_the_source(source, expected):
    assert where(BY_NAME["durations"], source) == expected


def test_settings_survive_the_trip_to_an_xdist_worker(tmp_path):
    from pytest_kbuild.run import shard as shards
    from pytest_kbuild.settings import from_wire, to_wire

    s = Settings(
        RunOptions(
            matrix=(tmp_path / "a.yaml", tmp_path / "b.yaml"),
            tree=tmp_path / "linux",
            results=tmp_path / "out",
            build_dir=None,
            runtime="local",
            jobserver=3,
            shard=shards.Shard(2, 4),
            durations=None,
        ),
        BuildOptions(
            keep_build_dir=True,
            jobs=3,
            image="localhost/kbuild/{arch}_{toolchain}",
            pull="never",
            network="host",
            cache_remote="redis://127.0.0.1:6379",
            fail_fast=True,
            cache_dir=tmp_path / "ccache",
            timeout=90.5,
        ),
        {"jobs": "env"},
    )
    import json

    back = from_wire(json.loads(json.dumps(to_wire(s))))
    assert back == s and back.where("jobs") == "PYTEST_KBUILD_JOBS"


def test_reproducer_repeats_declared_settings_that_differ_from_the_default():
    assert reproducer_args(BuildOptions()) == []
    assert reproducer_args(BuildOptions(fail_fast=True, timeout=90, jobs=3)) == [
        "--fail-fast",
        "--timeout=90",
    ]
    assert reproducer_args(BuildOptions(reproducible=False)) == ["--reproducible=off"]


@pytest.mark.parametrize(("value", "expected"), [("off", False), ("on", True), ("no", False)])
def test_reproducible_is_on_unless_turned_off(value, expected):
    assert BuildOptions().reproducible is True
    assert resolve(BY_NAME["reproducible"], value, {}, None) == (expected, "cli")
    env = {"PYTEST_KBUILD_REPRODUCIBLE": value}
    assert resolve(BY_NAME["reproducible"], None, env, None) == (expected, "env")
    with pytest.raises(KbuildUserError, match="^--kbuild-reproducible: 'maybe' is not a boolean"):
        resolve(BY_NAME["reproducible"], "maybe", {}, None)


@pytest.mark.parametrize(
    ("value", "problem"),
    [("0", "is not a positive number of seconds"), ("-1", "is not a positive"), ("x", "is not")],
)
def test_bad_timeout(value, problem):
    with pytest.raises(KbuildUserError, match=f"^--kbuild-timeout: '{value}' {problem}"):
        resolve(BY_NAME["timeout"], value, {}, None)


@pytest.mark.parametrize("value", ["-1", "0", "99999999999999999999"])
def test_jobs_is_one_rule_everywhere(value):
    with pytest.raises(KbuildUserError, match="--kbuild-jobs: "):
        resolve(BY_NAME["jobs"], value, {}, None)


def test_baseline_is_checked_when_the_run_starts(tmp_path):
    # Reading it is plugin/state.py's (test_plugin_state.py); the settings only say where.
    assert build_settings(_raw(baseline=("old", "env")), tmp_path, tmp_path).build.baseline == (
        tmp_path / "old"
    )
    with pytest.raises(KbuildUserError, match="is this run's results dir"):
        build_settings(_raw(baseline=("kbuild-results", "cli")), tmp_path, tmp_path)
    with pytest.raises(KbuildUserError) as exc:
        build_settings(_raw(fail_on=("new-warnings", "ini")), tmp_path, tmp_path)
    assert str(exc.value) == (
        "kbuild_fail_on: new-warnings needs a baseline to tell what is new; "
        "give --kbuild-baseline=DIR (the results of an earlier run)"
    )


def test_fail_on_accepts_its_policies_only():
    with pytest.raises(KbuildUserError) as exc:
        BY_NAME["fail_on"].parse("new", "--kbuild-fail-on")
    assert str(exc.value) == (
        "--kbuild-fail-on: fail-on 'new' is not known; accepted: never, warnings, new-warnings"
    )
    assert BY_NAME["fail_on"].parse("warnings", "x") == "warnings"


@pytest.mark.parametrize("name", sorted(o.name for o in options.OPTIONS if not o.flag))
def test_a_huge_option_value_gives_a_message_of_bounded_length(name):
    # Found by tests/unit/test_bad_input_properties.py: --kbuild-shard,
    # --kbuild-jobserver, --kbuild-progress, ... repeated a 5000-digit value whole.
    option = options.BY_NAME[name]
    try:
        option.parse("9" * 5000 + "x", option.cli)
    except KbuildError as err:
        assert len(str(err)) < 600
        assert option.cli in str(err)


def test_the_kcidb_settings_resolve_from_cli_env_and_ini():
    origin, base = BY_NAME["kcidb_origin"], BY_NAME["kcidb_base_url"]
    assert (origin.cli, origin.env, origin.ini) == (
        "--kbuild-kcidb-origin",
        "PYTEST_KBUILD_KCIDB_ORIGIN",
        "kbuild_kcidb_origin",
    )
    assert resolve(origin, None, {}, None) == ("pytest_kbuild", "default")
    assert resolve(origin, None, {"PYTEST_KBUILD_KCIDB_ORIGIN": "my_ci"}, None) == (
        "my_ci",
        "env",
    )
    assert resolve(base, None, {}, "https://ci.example.org/r") == (
        "https://ci.example.org/r",
        "ini",
    )
    with pytest.raises(KbuildUserError, match="^kbuild_kcidb_base_url: 'ftp://h' has scheme"):
        resolve(base, None, {}, "ftp://h")
    assert BY_NAME["kcidb"].path and BY_NAME["kcidb"].default is None
