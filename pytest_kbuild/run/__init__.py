"""Run-wide machinery below the builds: the shared jobserver, shards and
estimates, locks, temporary dirs, signals, results sent home, progress."""
