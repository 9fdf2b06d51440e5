"""The run's StashKeys and the xdist workerinput key, declared apart from
the modules that fill them: the entry point (hooks.py) and the modules it
imports on demand (state.py, items.py, progress.py, xdist.py) all read them,
and none of those imports another for a key."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .state import KbuildState

WORKERINPUT_KEY = "kbuild"  # the controller's settings in an xdist worker's workerinput
# The run's state (plugin/state.py); hooks look for it without importing
# the state's modules in a run without a matrix.
STATE: pytest.StashKey[KbuildState] = pytest.StashKey()
# The lines about dead runs' temporary dirs this run removed (run/tempdirs.py).
SWEPT: pytest.StashKey[list[str]] = pytest.StashKey()
