"""Every run-wide setting, declared once as a dataclass field.

``BuildOptions`` says how and where one build runs (the same for pytest,
``kbuild`` and the Python API); ``RunOptions`` holds what only a pytest run
has (matrices, results dir, shards). Each field's metadata (help, parser,
``kbuild`` spelling, whether the reproducer repeats it) is the one
declaration from which the pytest options (``--kbuild-<name>``, env
``PYTEST_KBUILD_<NAME>``, ini ``kbuild_<name>``), the ``kbuild`` arguments,
the xdist worker payload and the reproducer line are derived: a new setting
is one field here plus its behaviour.

Which of those sets a value in a run, and the resolved Settings, are
settings.py's. No pytest import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .parsers import (
    COMPRESSIONS,
    FAIL_ON,
    NETWORKS,
    PULL_POLICIES,
    Parse,
    boolean,
    choice,
    count,
    image_template,
    jobserver_mode,
    kcidb_base_url,
    kcidb_origin,
    kernel_image_name,
    positive_int,
    seconds,
    seconds_or_off,
    shard,
    text,
    url,
)

if TYPE_CHECKING:
    from .parsers import Shard

ENV_PREFIX = "PYTEST_KBUILD_"
IniType = Literal["args", "bool", "string"]


def setting(
    help: str,
    parse: Parse,
    default: Any = None,
    *,
    flag: bool = False,
    multiple: bool = False,
    path: bool = False,
    kbuild: tuple[str, ...] = (),
    reproduce: bool = False,
    decode: Callable[[Any], Any] | None = None,
) -> Any:
    """A dataclass field that declares one setting (see the module docstring).

    *path*: a path, relative to where it was given; *kbuild*: its ``kbuild``
    spellings (none: pytest only); *reproduce*: the reproducer repeats a
    non-default value; *decode*: how a worker turns the wire value back.
    """
    meta = {
        "help": help,
        "parse": parse,
        "flag": flag,
        "multiple": multiple,
        "path": path,
        "kbuild": kbuild,
        "reproduce": reproduce,
        "decode": decode,
    }
    if multiple:
        return field(default=tuple(default or ()), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class BuildOptions:
    """How and where a build runs; the same meaning in pytest, kbuild and the API."""

    jobs: int | None = setting(
        "make -j per build, without a jobserver (default: CPUs divided among xdist workers)",
        positive_int,
        kbuild=("-j", "--jobs"),
    )
    fail_fast: bool = setting(
        "stop a build at its first failing target (no --keep-going)",
        boolean,
        False,
        flag=True,
        kbuild=("--fail-fast",),
        reproduce=True,
    )
    keep_build_dir: bool = setting(
        "keep build objects after each build",
        boolean,
        False,
        flag=True,
        kbuild=("--keep-build-dir",),
    )
    cache_dir: Path | None = setting(
        "compiler cache directory for the ccache/sccache wrappers",
        text,
        path=True,
        kbuild=("--cache-dir",),
    )
    cache_remote: str | None = setting(
        "remote storage shared by the ccache/sccache wrappers of every machine "
        "(redis://HOST:PORT; ccache also http://..., file://...)",
        url,
        kbuild=("--cache-remote",),
    )
    image: str | None = setting(
        "container image for podman/docker builds; {arch} and {toolchain} are filled in "
        "(default: localhost/kbuild/{arch}_{toolchain}); a name@sha256:... pins one image",
        image_template,
        kbuild=("-i", "--image"),
    )
    pull: str = setting(
        "when to pull container images: missing (default), always or never",
        choice("pull", PULL_POLICIES),
        "missing",
        kbuild=("--pull",),
    )
    network: str = setting(
        "network of container build steps: none (default), host or default",
        choice("network", NETWORKS),
        "none",
        kbuild=("--network",),
    )
    timeout: float | None = setting(
        "seconds each target may run before its commands are killed and it is an ERROR "
        "(default: no limit)",
        seconds,
        kbuild=("--timeout",),
        reproduce=True,
    )
    retries: int = setting(
        "times a target that ended in a retryable ERROR (timeout, compiler OOM-killed, disk "
        "full, container engine failure) is run again; never a FAIL (default 0)",
        count,
        0,
        kbuild=("--retries",),
    )
    baseline: Path | None = setting(
        "results dir (or its results.json) of an earlier run, e.g. the target branch's CI "
        "artifacts: each diagnostic is then new (marked >>), fixed or unchanged",
        text,
        path=True,
        kbuild=("--baseline",),
        reproduce=True,  # fail-on new-warnings gives the same verdict only with it
    )
    verbose: bool = setting(
        "make prints every command it runs (no --silent); kbuild -v also shows make's output live",
        boolean,
        False,
        flag=True,
        kbuild=("-v", "--verbose"),
    )
    kernel_image: str | None = setting(
        "the image the kernel target builds and keeps instead of the arch's default "
        "(Image.bz2, vmlinux, ...: a file name under arch/ARCH/boot/, or vmlinux)",
        kernel_image_name,
        kbuild=("-I", "--kernel-image"),
        reproduce=True,
    )
    compression: str = setting(
        "how vmlinux and the modules, dtbs and headers tarballs are compressed: xz "
        "(default: vmlinux.xz, modules.tar.xz), zstd (.zst) or none",
        choice("compression", COMPRESSIONS),
        "xz",
        kbuild=("-z", "--compression"),
        reproduce=True,
    )
    fail_on: str = setting(
        "a target that make built fails when it has warnings: never (default), warnings, or "
        "new-warnings (not in --kbuild-baseline); a matrix's fail_on: wins for its builds",
        choice("fail-on", FAIL_ON),
        "never",
        kbuild=("--fail-on",),
        reproduce=True,
    )
    reproducible: bool = setting(
        "reproducible builds: on (default) sets KBUILD_BUILD_TIMESTAMP (the tree's HEAD "
        "commit date, else its Makefile's mtime), KBUILD_BUILD_USER/HOST, a debug prefix map "
        "in KCFLAGS/KAFLAGS and deterministic tar/xz, a user's values winning; off sets none",
        boolean,
        True,
        kbuild=("--reproducible",),
        reproduce=True,
    )


def _shard(value: Any) -> Shard | None:
    return shard(value, "workerinput") if value else None


# Named in --kbuild-shard's help; shard.py reads them (and defines the
# Kubernetes total, which no CI system sets).
GITLAB_INDEX, GITLAB_TOTAL = "CI_NODE_INDEX", "CI_NODE_TOTAL"
K8S_INDEX, K8S_TOTAL = "JOB_COMPLETION_INDEX", "PYTEST_KBUILD_SHARD_TOTAL"


@dataclass(frozen=True)
class RunOptions:
    """What only a pytest run has: matrices, tree, results, jobserver, shards."""

    matrix: tuple[Path, ...] = setting(
        "matrix YAML file(s) to build; repeat or separate with os.pathsep",
        text,
        multiple=True,
        path=True,
    )
    tree: Path | None = setting(
        "kernel source tree (overrides the matrix's tree:; default: current directory)",
        text,
        path=True,
    )
    results: Path = setting(
        "results directory for logs, artifacts and metadata.json",
        text,
        Path("kbuild-results"),
        path=True,
    )
    build_dir: Path | None = setting(
        "directory for build objects, DIR/<matrix>/<build id> per build (kbuild -b's layout), "
        "kept and used again by the next run: only what changed is rebuilt (default: temporary)",
        text,
        path=True,
    )
    jobserver: str | int = setting(
        "one GNU make jobserver shared by all builds: auto (on with several xdist workers "
        "and no --kbuild-jobs), on (one slot per CPU), off, or a number of slots",
        jobserver_mode,
        "auto",
    )
    runtime: str | None = setting(
        "runtime for every build, overriding the matrix: local, podman or docker", text
    )
    shard: Shard | None = setting(
        "build only shard I of N (I/N, from 1) of the matrices' builds; default: from "
        f"{GITLAB_INDEX}/{GITLAB_TOTAL} or {K8S_INDEX}/{K8S_TOTAL}",
        shard,
        decode=_shard,
    )
    attach_root: Path | None = setting(
        "directory the [[ATTACHMENT|path]] lines in JUnit <system-out> are relative to: "
        "the CI job's project dir or workspace (default: the rootdir)",
        text,
        path=True,
    )
    progress: float = setting(
        "seconds between progress lines: each running build's target, elapsed time and "
        "what make is doing (0 or off: none; none with -q either)",
        seconds_or_off,
        30.0,
    )
    codequality: Path | None = setting(
        "write a GitLab Code Quality report (Code Climate JSON) of the run's diagnostics "
        "to this file: artifacts:reports:codequality",
        text,
        path=True,
    )
    kcidb: Path | None = setting(
        "write the run as one KernelCI KCIDB JSON document (its checkout, a build per "
        "matrix build, a test per boot, KUnit case and kselftest) to this file, for kcidb-submit",
        text,
        path=True,
    )
    kcidb_origin: str = setting(
        "the origin of --kbuild-kcidb's document: the CI system's name, before the colon "
        "of every id; lower-case letters, digits and _ (default: pytest_kbuild)",
        kcidb_origin,
        "pytest_kbuild",
    )
    kcidb_base_url: str | None = setting(
        "the http://, https:// or file:// URL the results dir is served at: the log and "
        "file URLs of --kbuild-kcidb's document are relative to it (default: no URLs)",
        kcidb_base_url,
    )
    sarif: Path | None = setting(
        "write SARIF 2.1.0 of the run's diagnostics to this file, for GitHub code scanning "
        "(github/codeql-action/upload-sarif); paths relative to $GITHUB_WORKSPACE, else "
        "the current directory",
        text,
        path=True,
    )
    html: Path | None = setting(
        "write the self-contained HTML report to this file (default: RESULTS/report.html "
        "when --junitxml or --kbuild-results is given)",
        text,
        path=True,
    )
    plan_job: tuple[str, ...] = setting(
        "build only the jobs of a TuxSuite plan matrix whose name matches this glob "
        "(as tuxsuite plan --job-name); repeat for several",
        text,
        multiple=True,
    )
    durations: Path | None = setting(
        "JSON file of build durations for --kbuild-shard: a results.json of an earlier run "
        'or {"<matrix>::<build id>": seconds}; default: estimates',
        text,
        path=True,
    )


@dataclass(frozen=True)
class Option:
    """One declared setting as the pytest layer and kbuild see it."""

    name: str
    help: str
    parse: Parse
    default: Any
    flag: bool
    multiple: bool
    path: bool
    kbuild: tuple[str, ...]
    reproduce: bool
    decode: Callable[[Any], Any] | None

    @property
    def cli(self) -> str:
        return "--kbuild-" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def ini(self) -> str:
        return "kbuild_" + self.name

    @property
    def ini_type(self) -> IniType:
        """How pytest reads the ini key (``parser.addini(type=...)``): a list of
        values, a boolean, or one string that the setting's parser checks.
        ``args``, not ``paths``: a relative path is taken from the ini file's
        directory by build_settings, and an item may still be split on
        os.pathsep (pytest would join it to that directory first)."""
        if self.multiple:
            return "args"
        return "bool" if self.flag or self.parse is boolean else "string"


def _options(cls: type) -> tuple[Option, ...]:
    return tuple(Option(name=f.name, default=f.default, **f.metadata) for f in fields(cls))


BUILD_OPTIONS = _options(BuildOptions)
RUN_OPTIONS = _options(RunOptions)
OPTIONS = RUN_OPTIONS + BUILD_OPTIONS
BY_NAME = {o.name: o for o in OPTIONS}


def reproducer_args(options: BuildOptions) -> list[str]:
    """``kbuild`` arguments that repeat the non-default settings the
    declaration marks ``reproduce``."""
    out = []
    for o in BUILD_OPTIONS:
        v = getattr(options, o.name)
        if not o.reproduce or v == o.default:
            continue
        flag = o.kbuild[-1]
        if isinstance(v, bool) and not o.flag:
            out.append(f"{flag}={'on' if v else 'off'}")
            continue
        out.append(flag if o.flag else f"{flag}={v:g}" if isinstance(v, float) else f"{flag}={v}")
    return out


def replace(base: BuildOptions, **values: Any) -> BuildOptions:
    """*base* with keyword values; an unknown name is a TypeError that lists
    the accepted ones."""
    known = {o.name for o in BUILD_OPTIONS}
    bad = sorted(set(values) - known)
    if bad:
        raise TypeError(f"unknown keyword {bad[0]!r}; accepted: {', '.join(sorted(known))}")
    return dataclasses.replace(base, **values)


def plain(options: BuildOptions | RunOptions) -> dict[str, Any]:
    """The fields of *options* as JSON-ready values (paths as text)."""

    def value(v: Any) -> Any:
        if isinstance(v, tuple):
            return [value(x) for x in v]
        return v if v is None or isinstance(v, (bool, int, float, str)) else str(v)

    return {f.name: value(getattr(options, f.name)) for f in fields(options)}
