"""Live progress: every --kbuild-progress seconds, one line per running build
(target, elapsed time, what make is doing), with and without -n.

Each process that runs build items publishes its current item through
progress.py's files; the process with the terminal (the xdist controller,
or the only process) prints them. Both are daemon threads, stopped at the
session's end. Off with -q or --kbuild-progress=0.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..results import BUILD_LOG, results_folder
from ..run import progress
from .keys import STATE


class _Ticker:
    """Call *fn* every *interval* seconds in a daemon thread until stopped."""

    def __init__(self, interval: float, fn: Callable[[], None], name: str) -> None:
        self.interval, self.fn = interval, fn
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def _loop(self) -> None:
        while not self.stopped.wait(self.interval):
            with contextlib.suppress(Exception):  # progress never breaks a run
                self.fn()

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)


class ProgressHooks:
    """Publishes this process's build item; prints all of them where the
    terminal is."""

    def __init__(self, config: pytest.Config, interval: float) -> None:
        self.config = config
        self.interval = interval
        results = config.stash[STATE].settings.run.results
        self.directory = Path(results) / progress.DIRNAME
        winput = getattr(config, "workerinput", None)
        self.worker = str(winput["workerid"]) if winput else ""
        self.who = f"{self.worker or 'main'}-{os.getpid()}"
        self.current: progress.Running | None = None
        self.log: Path | None = None
        self.build_node = ""  # the running item's build (its state.builds key)
        self._tickers: list[_Ticker] = []

    # -- lifecycle ------------------------------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        publisher = _Ticker(self.interval / 2, self.publish, "kbuild-progress-publish")
        self._tickers.append(publisher)
        if not self.worker:  # the process with the terminal
            self._tickers.append(_Ticker(self.interval, self.show, "kbuild-progress-show"))
        for t in self._tickers:
            t.start()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        for t in self._tickers:
            t.stop()
        self._tickers.clear()
        with contextlib.suppress(OSError):  # progress never breaks a run
            progress.publish(self.directory, self.who, None)
        if not self.worker:
            # trylast, after xdist has stopped the workers: what is left is
            # the file of a worker that died (SIGKILL), stale.
            shutil.rmtree(self.directory, ignore_errors=True)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        node = item.parent
        spec = getattr(node, "spec", None)
        if spec is not None:
            run = self.config.stash[STATE].settings.run
            self.log = results_folder(run.results, item.path, spec.id) / BUILD_LOG
            self.current = progress.Running(spec.id, item.name, time.time(), worker=self.worker)
            self.build_node = node.nodeid if node is not None else ""
        try:
            yield
        finally:
            self.current, self.log, self.build_node = None, None, ""
            progress.publish(self.directory, self.who, None)

    # -- the two ticks --------------------------------------------------------
    def publish(self) -> None:
        current, log = self.current, self.log
        if current is None:
            return
        build = self.config.stash[STATE].builds.get(self.build_node)
        dirs = [str(d) for d in (build.build_dir, build.tree) if d] if build else []
        queued, since = build.waited() if build else (0.0, None)
        if since is not None:  # its next command waits for a slot
            doing, queued = progress.WAITING, queued + max(0.0, time.time() - since)
        else:
            doing = progress.doing(os.getpid(), within=dirs)
            doing = doing or (progress.last_line(log) if log else "")
        running = progress.Running(
            current.build_id, current.target, current.started, doing, current.worker, queued
        )
        progress.publish(self.directory, self.who, running)

    def show(self) -> None:
        running = progress.read(self.directory, max_age=2 * self.interval + 5)
        if not running:
            return
        tr: Any = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is None:
            return
        # Without -n the item that builds runs under output capture: step
        # outside it, as pytest's live logging does.
        capman: Any = self.config.pluginmanager.get_plugin("capturemanager")
        quiet = capman.global_and_fixture_disabled() if capman else contextlib.nullcontext()
        with quiet:
            if tr._tw.width_of_current_line:  # after xdist's progress dots
                tr.write("\n")
            for text in progress.lines(running):
                tr.write_line(f"kbuild: {text}")
