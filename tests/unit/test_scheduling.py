import pytest

from pytest_kbuild.run.scheduling import (
    MEMORY_PER_BUILD,
    auto_workers,
    estimate,
    keep_builds_together,
    longest_first,
    physical_memory,
    queue_order,
    weight,
)


def test_estimate_orders_kconfigs_by_size():
    tiny = estimate("tinyconfig", ["config", "kernel"])
    default = estimate("defconfig", ["config", "kernel"])
    allmod = estimate("allmodconfig", ["config", "kernel"])
    assert 0 < tiny < default < allmod
    assert estimate("multi_v7_defconfig", ["kernel"]) == estimate("defconfig", ["kernel"])


def test_estimate_grows_with_targets():
    assert estimate("defconfig", ["config", "kernel", "modules"]) > estimate(
        "defconfig", ["config", "kernel"]
    )


def test_weight_prefers_remembered_durations():
    assert weight("m.yaml::a", "tinyconfig", ["kernel"], {"m.yaml::a": 42.0}) == 42.0
    assert weight("m.yaml::b", "tinyconfig", ["kernel"], {"m.yaml::a": 42.0}) == estimate(
        "tinyconfig", ["kernel"]
    )
    assert weight("m.yaml::a", "tinyconfig", ["kernel"], {"m.yaml::a": "junk"}) == estimate(
        "tinyconfig", ["kernel"]
    )


def test_longest_first_breaks_ties_by_id():
    assert longest_first({"b": 1.0, "a": 1.0, "c": 5.0}) == ["c", "a", "b"]


def test_build_order_puts_failed_builds_first_and_unknown_scopes_last():
    weights = {"m::a": 10.0, "m::b": 30.0, "m::c": 20.0, "m::d": 5.0}
    scopes = ["m::a", "t.py::test_x", "m::b", "m::c", "m::d"]
    assert queue_order(scopes, weights) == ["m::b", "m::c", "m::a", "m::d", "t.py::test_x"]
    # --ff: the failed builds go first, heaviest first among themselves.
    assert queue_order(scopes, weights, first={"m::d", "m::a"}) == [
        "m::a",
        "m::d",
        "m::b",
        "m::c",
        "t.py::test_x",
    ]


def test_keep_builds_together_moves_each_build_to_its_first_item_in_target_order():
    # As --ff leaves them: failed targets of b first, then everything else.
    items = [("b", 1), ("x", None), ("a", 0), ("b", 0), ("a", 1), ("b", 2)]
    out = keep_builds_together(
        items, lambda i: i[0] if i[1] is not None else None, lambda i: i[1] or 0
    )
    assert out == [("b", 0), ("b", 1), ("b", 2), ("x", None), ("a", 0), ("a", 1)]


GIB = 1 << 30


@pytest.mark.parametrize(
    ("cpus", "shared", "workers"),
    [
        (1, False, 1),
        (1, True, 1),  # never more builds than CPUs
        (2, False, 1),
        (2, True, 2),  # the other build fills one build's serial phases
        (8, False, 4),
        (8, True, 2),
        (64, False, 32),
        (64, True, 16),
    ],
)
def test_auto_workers_by_cpus(cpus, shared, workers):
    assert auto_workers(cpus, 1024 * GIB, shared_budget=shared) == workers


def test_auto_workers_bounded_by_memory():
    assert auto_workers(64, 8 * MEMORY_PER_BUILD, shared_budget=True) == 8
    assert auto_workers(64, 8 * MEMORY_PER_BUILD, shared_budget=False) == 8
    assert auto_workers(8, MEMORY_PER_BUILD // 2, shared_budget=True) == 1
    assert auto_workers(8, 0, shared_budget=True) == 2  # unknown memory: no bound


def test_physical_memory_is_this_machines():
    with open("/proc/meminfo") as f:
        total_kib = int(f.readline().split()[1])
    assert abs(physical_memory() - total_kib * 1024) < 64 << 20
