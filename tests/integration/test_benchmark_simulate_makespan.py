"""benchmarks/simulate_makespan.py: the simulation on cases computed by hand,
and the script on the shipped data and on a tiny results dir."""

from __future__ import annotations

import json
import re

import pytest

from benchmarks import simulate_makespan as sim

ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)s\s+(\d+)s\s+([\d.]+)\s+(\d+)s\s+([\d.]+)$", re.M)


def builds(*seconds, jobs=1, targets=("kernel",)):
    """One build per figure, each of *targets* taking that long."""
    return [
        sim.SimBuild(
            f"m.yaml::b{i}", tuple(sim.SimTarget(t, s / len(targets), jobs) for t in targets)
        )
        for i, s in enumerate(seconds)
    ]


def test_four_equal_builds_on_two_workers_take_two_rounds():
    # One slot's worth of make each: two at a time, twice.
    assert sim.simulate(builds(100, 100, 100, 100), 2, 2) == pytest.approx(200)
    assert sim.ideal(builds(100, 100, 100, 100), 2) == pytest.approx(200)
    # Two jobs each (200 CPU s a build): two builds share both slots, 1 each.
    assert sim.simulate(builds(100, 100, 100, 100, jobs=2), 2, 2) == pytest.approx(400)
    # Alone, a 2-job build gets both slots: 100 s, and 4 of them 400 s.
    assert sim.simulate(builds(100, 100, 100, 100, jobs=2), 2, 1) == pytest.approx(400)


def test_the_longest_build_starts_first_and_the_rest_fill_the_other_worker():
    # Shortest first would start the 300 s build at 100 s: 400 s.
    four = builds(100, 100, 300, 100)
    assert sim.simulate(four, 2, 2) == pytest.approx(300)
    assert sim.ideal(four, 2) == pytest.approx(300)


def test_loadscope_look_ahead_ties_a_build_to_a_busy_worker():
    # xdist gives each worker a second build at once (2 or fewer items
    # left): the 300 s build's worker also gets a 100 s one, 400 s in all.
    four = builds(100, 100, 300, 100)
    assert sim.simulate(four, 2, 2, lookahead=sim.LOADSCOPE_LOOKAHEAD) == pytest.approx(400)
    # With 3 targets a build, the next one is handed out after the first target.
    three = builds(90, 90, 300, 90, targets=("config", "kernel", "modules"))
    assert sim.simulate(three, 2, 2) == pytest.approx(300)
    assert sim.simulate(three, 2, 2, lookahead=2) == pytest.approx(390)


def test_a_target_uses_no_more_slots_than_it_had():
    # 2 jobs a target on 8 slots and 2 workers: 4 slots idle, twice the ideal.
    eight = builds(100, 100, 100, 100, jobs=2)
    assert sim.simulate(eight, 8, 2) == pytest.approx(200)
    assert sim.ideal(eight, 8) == pytest.approx(100)
    assert sim.simulate(eight, 8, 2, jobs_per_target=4) == pytest.approx(100)


def test_boot_and_kunit_hold_one_slot_and_their_time_is_their_work():
    boot, kernel = sim.SimTarget("boot", 10, 2), sim.SimTarget("kernel", 10, 2)
    assert (boot.work, kernel.work) == (10, 20)
    assert sim.SimTarget("config+kernel", 10, 2).work == 20  # measured together: make
    b = [sim.SimBuild("m.yaml::b", (kernel, boot))]
    assert sim.simulate(b, 4, 1) == pytest.approx(20) == sim.ideal(b, 4)


def test_shares_give_what_one_job_cannot_use_to_the_others():
    assert sim.shares([1, 4, 4], 6) == pytest.approx([1, 2.5, 2.5])
    assert sim.shares([2, 2], 8) == pytest.approx([2, 2])


def test_cycle_repeats_the_builds_in_the_order_of_their_scopes():
    out = sim.cycle(builds(2, 1)[::-1], 5)
    assert [b.scope for b in out] == [f"m.yaml::b{i % 2}-{i}" for i in range(5)]
    assert [b.remembered for b in out] == [2, 1, 2, 1, 2]
    # The same build from two results dirs is two builds.
    assert len({b.scope for b in sim.cycle(builds(1) * 2, 4)}) == 4


def rows(out):
    found = [tuple(float(x) for x in m.groups()) for m in ROW.finditer(out)]
    assert found, out
    return found


def test_the_shipped_data_gives_a_row_per_slot_count_never_below_the_ideal(capsys):
    sim.main([])
    out = capsys.readouterr().out
    assert out.startswith("200 builds cycled from 18 measured, ")
    found = rows(out)
    assert [(r[0], r[1]) for r in found] == [(2, 2), (16, 4), (64, 16), (256, 64)]
    assert all(r[4] >= 1.0 and r[6] >= 1.0 for r in found), out


def test_a_tiny_results_dir(capsys, tmp_path):
    targets = {
        "config": {"outcome": "passed", "duration": 5.0, "queued": 1.0},
        "kernel": {"outcome": "passed", "duration": 100.0, "queued": 30.0},
        "boot": {"outcome": "passed", "duration": 3.0, "queued": 0.0},
        "modules": {"outcome": "skipped", "reason": "CONFIG_MODULES is not set"},
    }
    builds = {}
    for i, (jobs, slots) in enumerate([(None, 2), (2, None), (None, 8)]):
        build_id = f"arch{i}-gcc-tinyconfig"
        builds[build_id] = {"matrix": "m.yaml", "targets": targets}
        folder = tmp_path / "m" / build_id
        folder.mkdir(parents=True)
        metadata = {"jobs": jobs, "jobserver": {"slots": slots}, "host": {"cpus": 2}}
        (folder / "metadata.json").write_text(json.dumps(metadata))
    (tmp_path / "results.json").write_text(json.dumps({"schema": 3, "builds": builds}))
    loaded = sim.load_results(tmp_path)
    assert [[(t.name, t.seconds, t.jobs) for t in b.targets] for b in loaded] == [
        [("config", 5.0, 2), ("kernel", 100.0, 2), ("boot", 3.0, 2)]
    ] * 3
    sim.main(["--results", str(tmp_path), "--builds", "6", "--slots", "2", "4"])
    out = capsys.readouterr().out
    assert out.startswith("6 builds cycled from 3 measured, 1,278 CPU s;")
    found = rows(out)
    assert [(r[0], r[1]) for r in found] == [(2, 2), (4, 2)]
    assert all(r[4] >= 1.0 and r[6] >= 1.0 for r in found), out
