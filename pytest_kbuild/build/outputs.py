"""What a build made, for its record once it finished: kernelrelease,
vmlinux's size and _text, the modules (files this build made only), the
totals, the machine, the compiler cache's hits."""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path

from . import cachestats, probes
from .make import MakeEnv
from .record import BuildRecord

# Targets whose make links vmlinux (and System.map): when one passed, they are current.
LINKS_VMLINUX = frozenset({"kernel", "debugkernel", "xipkernel"})


def note(record: BuildRecord, make: MakeEnv, since: float, passed: Set[str], live: bool) -> None:
    """Note in *record* what the build in *make.build_dir* made since
    *since* (time.time(); 0: it never started) or checked when a target of
    *passed* (PASS) links it. *live*: the runtime may still be asked."""
    record.count()
    record.hardware = probes.hardware(make.build_dir)
    if make.build_dir is None or not since:
        return
    build_dir = make.build_dir
    record.kernelrelease = probes.kernelrelease(build_dir)

    def made(name: str) -> bool:
        return _mtime(build_dir / name) >= since

    # Current: made by this build, or checked by make when a target that
    # links vmlinux (or builds the modules) passed (an incremental dir).
    linked = bool(passed & LINKS_VMLINUX)
    rt = make.runtime if live else None
    if (linked or made("vmlinux")) and (build_dir / "vmlinux").is_file() and rt:
        tool = probes.size_tool(make.makevars())
        record.vmlinux.update(probes.vmlinux_size(rt, build_dir, tool))
    if linked or made("System.map"):
        record.vmlinux["text_offset"] = probes.text_offset(build_dir / "System.map")
    if "modules" in passed or made("modules.order"):
        record.modules = probes.modules(build_dir)
    # A build that stopped after its config (target config only) wrote
    # no kernel.release (or an incremental dir's is an older run's): ask
    # make, with this build's ARCH, O= and variables.
    current = made("include/config/kernel.release") or linked or "modules" in passed
    if "config" in passed and not current and rt:
        argv = make.make_command(["-s", "kernelrelease"])
        release = probes.make_kernelrelease(rt, argv, make.tree, make.env())
        record.kernelrelease = release or record.kernelrelease


def note_cache(record: BuildRecord, make: MakeEnv) -> None:
    """The wrapper's (ccache, sccache) report and its hits and misses. Once
    build.log is closed (a second finish(), after Ctrl-C) the runtime is not
    asked for the report again."""
    if make.log is not None and make.runtime is not None:
        stats = cachestats.report(make.wrapper, make.runtime, make.tree, make.env())
        if stats:
            record.wrapper["stats"] = stats
    if make.build_dir is not None:
        log = cachestats.log_path(make.wrapper, make.env())
        counts = cachestats.counts(make.wrapper, log, 0, None)
        if counts:
            record.wrapper["counts"] = counts


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
