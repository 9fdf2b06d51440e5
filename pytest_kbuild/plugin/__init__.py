"""The pytest layer of pytest-kbuild, one job per module: hooks (options,
configuration, collection), state (the run's state), items (matrix file ->
build -> target), xdist (scheduler and controller<->worker payload), rerun
(--lf/--ff with whole builds) and reporting (results.json and the summary).

Only this package (and hookspecs.py) imports pytest. ``hooks`` is the
pytest11 entry point; it imports the rest when a matrix is given, so that
pytest starts as fast without a matrix as without the plugin.
"""
