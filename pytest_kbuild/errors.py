"""The exception hierarchy: every message names the bad value, where it came
from and what is accepted."""

from __future__ import annotations

from collections.abc import Iterable


class KbuildError(Exception):
    """Base class; str(exc) is the message shown to the user."""


class KbuildUserError(KbuildError):
    """Bad matrix, option, definition or command line."""


class KbuildInfraError(KbuildError):
    """The machine cannot run the build: missing tool, full disk, runtime missing."""


def quoted(text: str, limit: int = 200) -> str:
    """``repr(text)``, of at most *limit* characters of *text*: a message
    names the bad value without printing all of a huge one."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def _known(known: Iterable[str]) -> str:
    return ", ".join(sorted(known)) or "(none)"


class UnknownDefinition(KbuildUserError):
    """A name that no data file (nor alias) defines."""

    def __init__(
        self, kind: str, name: str, known: Iterable[str], where: str = "", hint: str = ""
    ) -> None:
        prefix = f"{where}: " if where else ""
        more = f"; {hint}" if hint else ""
        super().__init__(f"{prefix}unknown {kind} {quoted(name)}; known: {_known(known)}{more}")
        self.kind = kind
        self.name = name


class UnknownArch(UnknownDefinition):
    def __init__(self, name: str, known: Iterable[str], where: str = "") -> None:
        super().__init__("arch", name, known, where)


class UnknownToolchain(UnknownDefinition):
    def __init__(self, name: str, known: Iterable[str], where: str = "", hint: str = "") -> None:
        super().__init__("toolchain", name, known, where, hint)


class ToolchainDirError(KbuildUserError):
    """A toolchain from a directory (``llvm@DIR``, ``gcc@DIR``) whose
    directory is missing, holds no compiler of the kind named, or whose
    compiler does not run."""

    def __init__(self, toolchain: str, directory: str, problem: str, where: str = "") -> None:
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}toolchain {quoted(toolchain)}: {problem}")
        self.toolchain = toolchain
        self.directory = directory


class UnknownTarget(UnknownDefinition):
    def __init__(self, name: str, known: Iterable[str], where: str = "") -> None:
        super().__init__("target", name, known, where)


class BadMakeGoal(KbuildUserError):
    """A ``make:<goal>`` target whose words make cannot take as goals."""

    def __init__(self, name: str, why: str, where: str = "") -> None:
        prefix = f"{where}: " if where else ""
        super().__init__(
            f"{prefix}target {name!r}: {why}; expected make:<goal> [VAR=value ...] "
            "(make:drivers/dma/, make:kernel/fork.o, make:W=1 kernel/)"
        )
        self.name = name


class TargetWarning(UserWarning):
    """A target that passed with problems (Status.WARNING: kselftest test
    dirs that did not build), shown in pytest's warnings summary."""


class UnknownWrapper(UnknownDefinition):
    def __init__(self, name: str, known: Iterable[str], where: str = "") -> None:
        super().__init__("wrapper", name, known, where)


class UnknownRuntime(UnknownDefinition):
    def __init__(self, name: str, known: Iterable[str], where: str = "") -> None:
        super().__init__("runtime", name, known, where)


class DefinitionError(KbuildUserError):
    """A data file under data/ (or a plugin's) is malformed."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path


class MatrixError(KbuildUserError):
    """A matrix file is malformed; the message starts with file:line: key path."""

    def __init__(self, path: str, problem: str, key: str = "", line: int | None = None) -> None:
        where = path if line is None else f"{path}:{line}"
        at = f" {key}:" if key else ""
        super().__init__(f"{where}:{at} {problem}")
        self.path = path
        self.key = key
        self.line = line
        self.problem = problem


class NotAKernelTree(KbuildUserError):
    def __init__(self, path: str, missing: Iterable[str], where: str = "", why: str = "") -> None:
        prefix = f"{where}: " if where else ""
        why = why or f"missing {', '.join(missing)}"
        super().__init__(
            f"{prefix}{quoted(path)} is not a kernel tree: {why} "
            "(a tree has Makefile, Kconfig and Kbuild at its top)"
        )
        self.path = path


class KconfigError(KbuildUserError):
    """A kconfig or kconfig_add entry that cannot be resolved."""

    def __init__(self, value: str, problem: str) -> None:
        super().__init__(f"kconfig {quoted(value)}: {problem}")
        self.value = value


class KconfigFetchError(KbuildInfraError):
    """A kconfig URL could not be fetched (404, timeout, too large)."""

    def __init__(self, url: str, problem: str) -> None:
        super().__init__(f"cannot fetch kconfig {quoted(url)}: {problem}")
        self.url = url


class KconfigNotAConfig(KconfigFetchError):
    """A kconfig URL answered with something that is not a .config or a
    fragment (an HTML login or error page, JSON, binary data).

    An infrastructure error like any failed fetch: the kernel was never
    configured with what was asked, so nothing about the kernel is judged.
    """

    def __init__(self, url: str, got: str, final_url: str = "") -> None:
        via = f" (redirected to {quoted(final_url)})" if final_url and final_url != url else ""
        super().__init__(
            url,
            f"got {got}{via}, not a .config or a fragment (accepted: lines CONFIG_X=..., "
            "'# CONFIG_X is not set', other comments and blank lines)",
        )


class ToolNotFound(KbuildInfraError):
    """A compiler or tool a build needs is not on PATH (in the runtime)."""

    def __init__(self, tool: str, what: str, hint: str = "", where: str = "on PATH") -> None:
        msg = f"{what}: {tool!r} not found {where}"
        super().__init__(f"{msg}; {hint}" if hint else msg)
        self.tool = tool


class ToolTooOld(KbuildInfraError):
    """A compiler older than the kernel tree accepts (its scripts/min-tool-version.sh)."""

    def __init__(self, what: str, version: str, minimum: str, source: str) -> None:
        super().__init__(
            f"{what}: version {version} is older than {minimum}, the minimum {source} "
            "accepts; use a newer compiler"
        )
        self.version = version
        self.minimum = minimum


class TargetTimeout(KbuildInfraError):
    """A target ran longer than its timeout; its commands were killed."""

    def __init__(self, seconds: float, command: str) -> None:
        super().__init__(
            f"timeout after {seconds:g} s (--kbuild-timeout / kbuild --timeout, or the "
            "matrix's timeout:): "
            f"{command} was killed"
        )
        self.seconds = seconds


class ShardError(KbuildUserError):
    """A shard spec (--kbuild-shard, or CI variables) that names no shard."""

    def __init__(self, value: str, where: str, problem: str, accepted: str) -> None:
        super().__init__(f"{where}: {quoted(value)} {problem}; accepted: {accepted}")
        self.value = value
        self.where = where


class DurationsError(KbuildUserError):
    """A durations file (--kbuild-durations) that cannot be read or has the wrong shape."""

    def __init__(self, path: str, where: str, problem: str) -> None:
        super().__init__(
            f"{where}: {path!r}: {problem}; accepted: the results.json of an earlier run "
            'or a JSON object {"<matrix>::<build id>": seconds}'
        )
        self.path = path
        self.where = where


class MergeError(KbuildUserError):
    """Results directories that cannot be merged: missing, malformed or overlapping."""

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(f"{what}: {problem}")
        self.what = what


class ImageNotFound(KbuildInfraError):
    """A build's container image is neither present nor pullable."""

    def __init__(self, ref: str, engine: str, problem: str, hint: str) -> None:
        super().__init__(f"image {ref!r} ({engine}): {problem}; {hint}")


class NotAResultsDir(KbuildUserError):
    """A path given as a results directory is not one."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(
            f"{path!r} {why}; accepted: a results dir (results.json or "
            "<matrix>/<build id>/metadata.json inside)"
        )
        self.path = path


class BadBaseline(KbuildUserError):
    """A --kbuild-baseline that is not the results of an earlier run."""

    def __init__(self, where: str, path: str, why: str) -> None:
        super().__init__(
            f"{where}: {path!r} {why}; accepted: the results dir of an earlier run "
            "(or its results.json), with <matrix>/<build id>/metadata.json inside"
        )
        self.path = path


class KcidbError(KbuildUserError):
    """What cannot become a KernelCI KCIDB document (report/kcidb.py): an
    origin or base URL outside KCIDB's grammar, a results dir without a
    results.json of this version's schema."""

    def __init__(self, where: str, value: str, problem: str, accepted: str) -> None:
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{quoted(value)} {problem}; accepted: {accepted}")
        self.value = value
        self.where = where
