"""signals.py: SIGTERM raises Terminated (a KeyboardInterrupt) where builds
may run, is noted elsewhere, and is ignored while the cleanup runs."""

from __future__ import annotations

import os
import signal
import time

import pytest

from pytest_kbuild import signals


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
