"""signals.py: SIGTERM raises Terminated (a KeyboardInterrupt) where builds
may run, is noted elsewhere, and is ignored while the cleanup runs."""

from __future__ import annotations

import os
import signal
import time

import pytest

from pytest_kbuild.run import signals


@pytest.fixture
def installed():
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        pytest.skip("this process already handles SIGTERM")
    assert signals.install()
    yield
    signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def sigterm():
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.5)  # the handler runs at the next bytecode


def test_sigterm_raises_then_is_ignored(installed):
    with pytest.raises(signals.Terminated, match="^terminated by SIGTERM$") as exc:
        sigterm()
    assert isinstance(exc.value, KeyboardInterrupt) and signals.received()
    sigterm()  # a second one while cleaning up: ignored, the process lives


def test_outside_the_window_it_is_only_noted(installed):
    signals.raising(False)
    sigterm()
    assert signals.received()


def test_install_leaves_someone_elses_handler():
    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        assert not signals.install()
        assert signal.getsignal(signal.SIGTERM) is mine
        with signals.sigterm_interrupts():
            assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_an_ignored_sigint_raises_again():
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert signals.restore_sigint()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert not signals.restore_sigint()  # not ignored now: left alone
    finally:
        signal.signal(signal.SIGINT, old)


def test_children_are_found_and_a_sigterm_is_passed_on():
    import subprocess

    child = subprocess.Popen(["sleep", "30"])
    try:
        assert child.pid in signals.children()
        assert os.getpid() not in signals.children()
        with signals.sigterm_interrupts():
            signals.forward_to_children()
            with pytest.raises(signals.Terminated):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
        assert child.wait(timeout=5) == -signal.SIGTERM
    finally:
        signals.forward_to_children(False)
        if child.poll() is None:
            child.kill()
