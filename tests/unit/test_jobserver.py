import os
import stat
import threading

import pytest

from pytest_kbuild.errors import KbuildInfraError, KbuildUserError
from pytest_kbuild.options import BY_NAME
from pytest_kbuild.run import jobserver as js
from pytest_kbuild.settings import resolve


@pytest.fixture
def server():
    s = js.Jobserver(3, "on")
    yield s
    s.close()


@pytest.mark.parametrize(
    ("value", "mode"), [("auto", "auto"), ("ON", "on"), (" off ", "off"), ("1", 1), ("64", 64)]
)
def test_parse_mode(value, mode):
    assert js.parse_mode(value, "--kbuild-jobserver") == mode


@pytest.mark.parametrize("value", ["0", "-2", "yes", "", "4097", "2.5"])
def test_bad_mode_names_option_and_what_is_accepted(value):
    with pytest.raises(KbuildUserError) as exc:
        js.parse_mode(value, "PYTEST_KBUILD_JOBSERVER")
    assert str(exc.value) == (
        f"PYTEST_KBUILD_JOBSERVER: {value!r} is not a jobserver mode; accepted: "
        "auto, on, off or a number of slots from 1 to 4096"
    )


def test_option_defaults_to_auto_and_is_layered():
    opt = BY_NAME["jobserver"]
    assert resolve(opt, None, {}, None) == ("auto", "default")
    assert resolve(opt, "3", {opt.env: "off"}, "on") == (3, "cli")
    assert resolve(opt, None, {opt.env: "off"}, "on") == ("off", "env")


@pytest.mark.parametrize(
    ("mode", "workers", "jobs_given", "slots"),
    [
        ("auto", 2, False, 8),  # several workers: one slot per CPU
        ("auto", 1, False, None),  # one build at a time: make -j<CPUs> is enough
        ("auto", 0, False, None),  # no xdist
        ("auto", 4, True, None),  # --kbuild-jobs given: the user's -j wins
        ("on", 1, False, 8),
        ("off", 4, False, None),
        (5, 1, False, 5),
    ],
)
def test_slots_for(mode, workers, jobs_given, slots):
    assert js.slots_for(mode, workers=workers, cpus=8, jobs_given=jobs_given) == slots


def test_fifo_is_private_filled_and_removed(server):
    st = server.path.stat()
    assert stat.S_ISFIFO(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    assert stat.S_IMODE(server.path.parent.stat().st_mode) == 0o700
    assert server.available() == 3
    assert server.info.to_json() == {"mode": "on", "slots": 3, "fifo": str(server.path)}
    assert js.JobserverInfo.from_json(server.info.to_json()) == server.info
    server.close()
    assert not server.path.parent.exists()
    server.close()  # idempotent


def test_slot_takes_one_token_and_gives_it_back(server):
    with js.slot(server.path):
        assert server.available() == 2
        with js.slot(server.path):
            assert server.available() == 1
    assert server.available() == 3


def test_slot_gives_the_token_back_on_error(server):
    with pytest.raises(KeyboardInterrupt), js.slot(server.path):
        raise KeyboardInterrupt
    assert server.available() == 3


def test_slot_waits_for_a_free_token():
    server = js.Jobserver(1)
    order = []

    def second():
        with js.slot(server.path):
            order.append("2nd")

    try:
        with js.slot(server.path):
            t = threading.Thread(target=second)
            t.start()
            t.join(0.3)
            order.append("1st done")
        t.join(5)
        assert order == ["1st done", "2nd"]
        assert server.available() == 1
    finally:
        server.close()


def test_slot_on_a_missing_fifo_is_an_infra_error(tmp_path):
    missing = pytest.raises(KbuildInfraError, match=r"jobserver FIFO .*nope.* cannot be opened")
    with missing, js.slot(tmp_path / "nope"):
        pass
    (tmp_path / "file").write_text("")
    with pytest.raises(KbuildInfraError, match="is not a FIFO"), js.slot(tmp_path / "file"):
        pass


def test_wrap_opens_the_fifo_as_fd_3_and_adds_to_makeflags(tmp_path):
    argv = js.wrap(["make", "--silent", "O=out", "vmlinux"], tmp_path / "fifo")
    assert argv[:2] == ["sh", "-c"]
    assert argv[3:] == ["sh", str(tmp_path / "fifo"), "make", "--silent", "O=out", "vmlinux"]
    script = argv[2]
    assert 'exec 3<>"$1"' in script and "--jobserver-auth=3,3" in script and " -j " not in script


def test_wrapper_script_sets_makeflags_and_fd(server, tmp_path):
    import subprocess

    probe = ["sh", "-c", 'printf "%s|" "$MAKEFLAGS"; [ -p /dev/fd/3 ] && echo fifo', "x"]
    env = {"PATH": os.environ["PATH"], "MAKEFLAGS": "k"}
    out = subprocess.run(js.wrap(probe, server.path), env=env, capture_output=True, text=True)
    assert out.stdout == "k --jobserver-auth=3,3|fifo\n"
    env.pop("MAKEFLAGS")
    out = subprocess.run(js.wrap(probe, server.path), env=env, capture_output=True, text=True)
    assert out.stdout.startswith("--jobserver-auth=3,3|")
