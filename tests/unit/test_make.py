"""The make environment (build/make.py): one object runs every command of a
build, with the running target's variables and deadline."""

import io
import threading
import time

import pytest
from fakes import FakeRuntime, make_tree

from pytest_kbuild.build.build import Build
from pytest_kbuild.definitions.targets import Target
from pytest_kbuild.errors import KbuildInfraError, TargetTimeout
from pytest_kbuild.run import jobserver as js
from pytest_kbuild.runtime import base, container


@pytest.fixture
def make(tmp_path):
    b = Build(make_tree(tmp_path / "tree"), arch="x86_64", jobs=3, runtime=FakeRuntime())
    env = b.make
    env.build_dir, env.runtime, env.log = tmp_path / "obj", b.runtime, io.BytesIO()
    return env


def test_make_command_has_the_jobs_the_build_dir_and_every_variable(make):
    argv = make.make_command(["olddefconfig"])
    assert argv[:4] == ["make", "--silent", "--keep-going", "--jobs=3"]
    assert argv[4] == f"O={make.build_dir}"
    assert "ARCH=x86_64" in argv and argv[-1] == "olddefconfig"


def test_a_shared_jobserver_replaces_jobs(make, tmp_path):
    make.jobserver = tmp_path / "fifo"
    assert not any(a.startswith("--jobs") for a in make.make_command([]))


def test_while_a_target_runs_its_variables_are_computed_once(make, monkeypatch):
    calls = []
    real = make.makevars

    def counted():
        calls.append(1)
        return real()

    monkeypatch.setattr(make, "makevars", counted)
    with make.target(Target.load("kernel"), 0):
        make.make_command([])
        make.make_command([])
    assert len(calls) == 1
    make.make_command([])  # after it: computed again
    assert len(calls) == 2


def test_run_echoes_the_command_and_a_failure_into_the_log(make):
    make.runtime.exit_codes["vmlinux"] = 2
    assert make.run(["make", "vmlinux"]) == 2
    log = make.log.getvalue().decode()
    assert log.startswith("$ make --silent") and log.endswith("E: exit status 2\n")


def test_a_command_past_the_targets_deadline_is_a_timeout(make):
    make.runtime.hang.add("vmlinux")
    with make.target(Target.load("kernel"), 5), pytest.raises(TargetTimeout, match="after 5 s"):
        make.run(["make", "vmlinux"])


class FullDisk(io.BytesIO):
    def write(self, data):
        raise OSError(28, "No space left on device")


def test_a_log_that_cannot_be_written_names_build_log(make):
    make.log = FullDisk()
    with pytest.raises(KbuildInfraError, match=r"cannot write .*build\.log"):
        make.line("x")


def test_guest_paths_are_the_container_mounts_and_none_on_the_host():
    assert base.guest_paths(FakeRuntime()) == ()
    podman = container.ContainerRuntime()
    assert base.guest_paths(podman) == (container.GUEST_TREE, container.GUEST_BUILD)


@pytest.fixture
def held_slot(make):
    """A one-slot jobserver whose token another build holds for 0.5 s; what
    the build saw while it waited."""
    server = js.Jobserver(1)
    make.jobserver = server.path
    seen = {}
    taken = threading.Event()

    def other_build():
        with js.slot(server.path):
            taken.set()
            time.sleep(0.5)
            seen["waiting_since"] = make.waiting_since

    holder = threading.Thread(target=other_build)
    holder.start()
    taken.wait(5)
    yield seen
    holder.join(5)
    server.close()


def test_the_wait_for_a_jobserver_slot_is_queued_time(make, held_slot):
    before = time.time()
    with make.target(Target.load("kernel"), 0):
        assert make.run(["make", "vmlinux"]) == 0
        assert 0.4 <= make.queued < 5
    assert before <= held_slot["waiting_since"] <= before + 1  # while it waited
    assert make.waiting_since is None
    with make.target(Target.load("kernel"), 0):  # the next target starts from 0
        assert make.queued == 0


def test_the_wait_for_a_slot_does_not_count_against_the_timeout(make, held_slot):
    make.runtime.hang.add("vmlinux")
    with make.target(Target.load("kernel"), 5), pytest.raises(TargetTimeout):
        make.run(["make", "vmlinux"])
    # the 5 s it was given are from when it got its slot, not from when it asked
    assert make.runtime.timeouts[-1] > 4.8 and make.queued >= 0.4
