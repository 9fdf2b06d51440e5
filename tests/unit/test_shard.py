import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_kbuild.errors import DurationsError, ShardError
from pytest_kbuild.matrix.matrixfile import BuildSpec
from pytest_kbuild.run.scheduling import estimate
from pytest_kbuild.run.shard import (
    ACCEPTED,
    Shard,
    ShardPlan,
    assign,
    format_seconds,
    from_environ,
    load_durations,
    parse,
    plan,
    weights,
)

# -- parse ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shard"),
    [
        ("1/1", Shard(1, 1)),
        ("2/4", Shard(2, 4)),
        (" 4 / 4 ", Shard(4, 4)),
        ("10/12", Shard(10, 12)),
    ],
)
def test_parse(value, shard):
    assert parse(value, "--kbuild-shard") == shard
    assert str(shard) == f"{shard.index}/{shard.total}"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2", "is not I/N"),
        ("2-4", "is not I/N"),
        ("a/b", "is not I/N"),
        ("-1/4", "is not I/N"),
        ("", "is not I/N"),
        ("1/0", "has 0 shards; there must be at least 1"),
        ("0/4", "has index 0 outside 1..4 (shards count from 1)"),
        ("5/4", "has index 5 outside 1..4 (shards count from 1)"),
    ],
)
def test_parse_errors_name_value_source_and_what_is_accepted(value, problem):
    with pytest.raises(ShardError) as exc:
        parse(value, "PYTEST_KBUILD_SHARD")
    assert str(exc.value) == f"PYTEST_KBUILD_SHARD: {value!r} {problem}; accepted: {ACCEPTED}"
    assert exc.value.value == value
    assert exc.value.where == "PYTEST_KBUILD_SHARD"


# -- CI variables --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "shard"),
    [
        ({}, None),
        ({"CI_NODE_TOTAL": "1"}, None),  # GitLab, a job without parallel:
        ({"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "4"}, Shard(3, 4)),
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "1"}, Shard(1, 1)),
        ({"JOB_COMPLETION_INDEX": "0", "PYTEST_KBUILD_SHARD_TOTAL": "4"}, Shard(1, 4)),
        ({"JOB_COMPLETION_INDEX": "3", "PYTEST_KBUILD_SHARD_TOTAL": "4"}, Shard(4, 4)),
        ({"PYTEST_KBUILD_SHARD_TOTAL": "4"}, None),
        (  # GitLab's variables win over a Kubernetes index
            {"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "2", "JOB_COMPLETION_INDEX": "0"},
            Shard(2, 2),
        ),
    ],
)
def test_from_environ(env, shard):
    assert from_environ(env) == shard


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"CI_NODE_INDEX": "5", "CI_NODE_TOTAL": "4"},
            f"CI_NODE_INDEX/CI_NODE_TOTAL: '5/4' has index 5 outside 1..4 (shards count from 1); "
            f"accepted: {ACCEPTED}",
        ),
        (
            {"CI_NODE_INDEX": "2"},
            f"CI_NODE_INDEX/CI_NODE_TOTAL: '2/' is not I/N; accepted: {ACCEPTED}",
        ),
        (
            {"JOB_COMPLETION_INDEX": "2"},
            "JOB_COMPLETION_INDEX: '2' is set (a Kubernetes indexed Job) but "
            "PYTEST_KBUILD_SHARD_TOTAL is not; accepted: PYTEST_KBUILD_SHARD_TOTAL=<the Job's "
            "completions>, or --kbuild-shard=1/1 for the whole matrix",
        ),
        (
            {"JOB_COMPLETION_INDEX": "4", "PYTEST_KBUILD_SHARD_TOTAL": "4"},
            "JOB_COMPLETION_INDEX/PYTEST_KBUILD_SHARD_TOTAL: '4/4' has index 4, not below the "
            "total 4; accepted: 0 <= JOB_COMPLETION_INDEX < PYTEST_KBUILD_SHARD_TOTAL "
            "(the index counts from 0)",
        ),
        (
            {"JOB_COMPLETION_INDEX": "0", "PYTEST_KBUILD_SHARD_TOTAL": "four"},
            "JOB_COMPLETION_INDEX/PYTEST_KBUILD_SHARD_TOTAL: '0/four' is not two whole numbers; "
            "accepted: 0 <= JOB_COMPLETION_INDEX < PYTEST_KBUILD_SHARD_TOTAL "
            "(the index counts from 0)",
        ),
    ],
)
def test_from_environ_errors(env, message):
    with pytest.raises(ShardError) as exc:
        from_environ(env)
    assert str(exc.value) == message


# -- assignment ----------------------------------------------------------------------------


def test_assign_heaviest_first_to_the_lightest_shard():
    w = {"a": 10.0, "b": 8.0, "c": 5.0, "d": 5.0, "e": 1.0}
    # a->1 (10), b->2 (8), c->2 (13), d->1 (15), e->2 (14)
    assert assign(w, 2) == [["a", "d"], ["b", "c", "e"]]


def test_assign_ties_go_to_the_lowest_shard_and_by_scope():
    assert assign({"b": 1.0, "a": 1.0, "c": 1.0}, 2) == [["a", "c"], ["b"]]
    assert assign({"a": 1.0}, 3) == [["a"], [], []]
    assert assign({}, 2) == [[], []]


def test_plan_and_its_line():
    w = {"m.yaml::a": 3000.0, "m.yaml::b": 600.0, "m.yaml::c": 125.0}
    p = plan(w, Shard(2, 2))
    assert p == ShardPlan(Shard(2, 2), frozenset({"m.yaml::b", "m.yaml::c"}), 3, 725.0)
    assert p.line() == "kbuild shard 2/2: 2 of 3 builds (est. 12m05s)"
    assert plan(w, Shard(1, 2)).line() == "kbuild shard 1/2: 1 of 3 builds (est. 50m00s)"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (40.4, "40s"), (60, "1m00s"), (725, "12m05s"), (3720, "1h02m"), (90000, "25h00m")],
)
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


build_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12)
seconds = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(
    st.dictionaries(build_ids, seconds, max_size=60),
    st.integers(min_value=1, max_value=12),
    st.randoms(),
)
def test_every_build_lands_in_exactly_one_shard(weights_by_id, total, rnd):
    w = {f"m.yaml::{b}": s for b, s in weights_by_id.items()}
    shards = assign(w, total)
    assert len(shards) == total
    placed = [scope for shard in shards for scope in shard]
    assert sorted(placed) == sorted(w)  # each build once, none lost
    plans = [plan(w, Shard(i, total)) for i in range(1, total + 1)]
    assert sum(len(p.scopes) for p in plans) == len(w)
    assert frozenset().union(*(p.scopes for p in plans)) == set(w)
    # Every machine computes the same split, whatever order it read the builds in.
    items = list(w.items())
    rnd.shuffle(items)
    assert assign(dict(items), total) == shards
    # Greedy balance: the heaviest shard exceeds the lightest by at most one build.
    loads = [sum(w[s] for s in shard) for shard in shards]
    assert max(loads) - min(loads) <= max(w.values(), default=0) + 1e-6


def test_weights_use_durations_then_estimates_and_skips_cost_nothing():
    spec = BuildSpec(
        id="a", arch="x86_64", toolchain="gcc", kconfig="tinyconfig", targets=("kernel",)
    )
    skipped = BuildSpec(
        id="b", arch="x86_64", toolchain="gcc", kconfig="defconfig", skip_reason="excluded"
    )
    builds = [("m.yaml::a", spec), ("m.yaml::b", skipped), ("n.yaml::a", spec)]
    assert weights(builds, {"m.yaml::a": 42.0, "m.yaml::b": 99.0}) == {
        "m.yaml::a": 42.0,
        "m.yaml::b": 0.0,
        "n.yaml::a": estimate("tinyconfig", ["kernel"]),
    }


# -- durations files -----------------------------------------------------------------------


def test_durations_from_a_plain_object(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"m.yaml::a": 12, "matrices/s.yaml::b": 3.5}))
    assert load_durations(path, "--kbuild-durations") == {
        "m.yaml::a": 12.0,
        "matrices/s.yaml::b": 3.5,
    }


@pytest.mark.parametrize(
    ("schema", "config", "kernel"),
    [(2, 1.5, 10.25), (1, "1.500", "10.250")],  # schema 1 wrote durations as strings
)
def test_durations_from_results_json_sum_the_targets(tmp_path, schema, config, kernel):
    results = {
        "schema": schema,
        "matrices": ["/abs/m.yaml"],
        "results_dir": "/abs/kbuild-results",
        "totals": {"builds": 2},
        "builds": {
            "x86_64-gcc-defconfig": {
                "matrix": "m.yaml",
                "targets": {
                    "config": {"outcome": "passed", "duration": config},
                    "kernel": {"outcome": "failed", "duration": kernel},
                    "dtbs": {"outcome": "skipped"},
                },
            },
            "arm64-gcc-defconfig": {"matrix": "m.yaml", "targets": {}},
        },
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    assert load_durations(path, "--kbuild-durations") == {
        "m.yaml::x86_64-gcc-defconfig": 11.75,
        "m.yaml::arm64-gcc-defconfig": 0.0,
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (None, "cannot be read: No such file or directory"),
        ("[1, 2]", "is not a JSON object"),
        ('{"a": 1}', "key 'a' is not <matrix>::<build id>"),
        ('{"m.yaml::a": "slow"}', "'m.yaml::a': 'slow' is not a number of seconds"),
        ('{"m.yaml::a": -1}', "'m.yaml::a': -1 is not a number of seconds"),
        ('{"m.yaml::a": true}', "'m.yaml::a': True is not a number of seconds"),
        ('{"schema": 1, "builds": []}', "builds is not a JSON object"),
        ('{"schema": 1, "builds": {"b": {}}}', "builds.b has no targets object"),
        (
            '{"schema": 1, "builds": {"b": {"targets": {"kernel": {"duration": "x"}}}}}',
            "builds.b.targets.kernel.duration is not seconds",
        ),
    ],
)
def test_durations_errors(tmp_path, text, problem):
    path = tmp_path / "d.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(DurationsError) as exc:
        load_durations(path, "PYTEST_KBUILD_DURATIONS")
    assert str(exc.value) == (
        f"PYTEST_KBUILD_DURATIONS: {str(path)!r}: {problem}; accepted: the results.json of an "
        'earlier run or a JSON object {"<matrix>::<build id>": seconds}'
    )


def test_durations_file_that_is_not_json(tmp_path):
    path = tmp_path / "d.json"
    path.write_text("{")
    with pytest.raises(DurationsError, match=r"^--kbuild-durations: '.*d\.json': is not JSON \("):
        load_durations(path, "--kbuild-durations")


def test_an_absurd_number_of_shards_is_refused_at_once():
    with pytest.raises(ShardError, match="has 10000000000 shards; at most 10000"):
        parse("1/10000000000", "--kbuild-shard")


# -- gaps found by mutation testing (benchmarks/mutation.py shard) -------------------------


def test_the_shard_bound_is_inclusive_and_its_error_names_everything():
    assert parse("10000/10000", "--kbuild-shard") == Shard(10000, 10000)
    with pytest.raises(ShardError) as exc:
        parse("1/10001", "PYTEST_KBUILD_SHARD")
    assert str(exc.value) == (
        f"PYTEST_KBUILD_SHARD: '1/10001' has 10001 shards; at most 10000; accepted: {ACCEPTED}"
    )


def test_a_kubernetes_index_past_the_total_names_both_numbers():
    with pytest.raises(ShardError, match=r"'5/4' has index 5, not below the total 4;"):
        from_environ({"JOB_COMPLETION_INDEX": "5", "PYTEST_KBUILD_SHARD_TOTAL": "4"})


def test_a_plain_durations_object_with_a_schema_key_is_not_a_results_json(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('{"schema": 1, "m.yaml::a": 3}')
    with pytest.raises(DurationsError, match="key 'schema' is not <matrix>::<build id>"):
        load_durations(path, "--kbuild-durations")


@pytest.mark.parametrize(
    ("entry", "problem"),
    [(5, "kernel.duration is not seconds"), ({"duration": "-5"}, "kernel.duration is not")],
)
def test_durations_from_results_json_refuse_a_bad_target_entry(tmp_path, entry, problem):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema": 1, "builds": {"b": {"targets": {"kernel": entry}}}}))
    with pytest.raises(DurationsError, match=problem):
        load_durations(path, "--kbuild-durations")


def test_durations_of_a_build_without_its_matrix_have_an_empty_matrix_part(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema": 1, "builds": {"b": {"targets": {}}}}))
    assert load_durations(path, "--kbuild-durations") == {"::b": 0.0}


def test_assign_takes_the_heaviest_first_whatever_the_names():
    # By name alone a and c would share shard 1.
    assert assign({"a": 1.0, "b": 1.0, "c": 2.0}, 2) == [["c"], ["a", "b"]]


def test_format_seconds_at_one_hour():
    assert format_seconds(3599) == "59m59s"
    assert format_seconds(3600) == "1h00m"
