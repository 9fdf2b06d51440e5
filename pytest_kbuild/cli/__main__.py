"""``python -m pytest_kbuild.cli``: the ``pytest-kbuild`` command."""

from __future__ import annotations

import sys

from .commands import main

sys.exit(main())
