"""pytest collection nodes: MatrixFile -> BuildNode (one build) -> BuildItem
(one target)."""

from __future__ import annotations

import os
import shlex
import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import ReprExceptionInfo

from .. import diagnostics
from ..build.build import Build
from ..definitions.targets import Target, with_dependencies
from ..diagnostics import logscan
from ..errors import KbuildError, KbuildInfraError, KbuildUserError, TargetWarning
from ..report import folds
from ..results import BUILD_LOG, METADATA, Scope, Status, TargetResult
from ..spec import BuildSpec
from . import cases, junit, longrepr
from .keys import STATE

JUNIT_ATTACHMENTS = (BUILD_LOG, "config", METADATA)  # those that exist are attached
MAX_FIXED_SHOWN = 10  # fixed diagnostics in a failure's text


class MatrixFile(pytest.File):
    """A matrix YAML file given with --kbuild-matrix."""

    def collect(self) -> Iterator[BuildNode]:
        state = self.config.stash[STATE]
        try:
            matrix = state.matrix(self.path)
        except KbuildUserError as err:
            raise self.CollectError(str(err)) from None
        for spec in matrix.builds:
            spec = state.effective(spec)
            yield BuildNode.from_parent(self, name=spec.id, spec=spec, tree=matrix.tree)


class BuildNode(pytest.Collector):
    """One build of the matrix; its items are the targets, in build order."""

    def __init__(self, *, spec: BuildSpec, tree: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.tree = tree

    def collect(self) -> Iterator[pytest.Item]:
        for target in self.spec.targets:
            # make:<goal> targets get a path-safe item name (make-drivers-dma).
            built = BuildItem.from_parent(self, name=Target.load(target).item_id, target=target)
            yield self._marked(built, target, self.spec.skip_reason)
        # A plan's target that cannot be built here (a TuxMake target, a
        # boot without its target) is a SKIP item with why, not left out.
        for target, why in self.spec.unavailable:
            item = UnavailableItem.from_parent(self, name=target)
            yield self._marked(item, target, self.spec.skip_reason or why)

    def _marked(self, item: pytest.Item, target: str, skip_reason: str) -> pytest.Item:
        # -m "kbuild(arch='arm64')" matches these values exactly, where
        # -k matches substrings of the node id (-k arm picks arm64 too).
        job = {"job": self.spec.job} if self.spec.job else {}
        item.add_marker(
            pytest.mark.kbuild(
                arch=self.spec.arch,
                toolchain=self.spec.toolchain,
                kconfig=self.spec.kconfig,
                target=target,
                build_id=self.spec.id,
                **job,
            )
        )
        if skip_reason:
            item.add_marker(pytest.mark.skip(reason=skip_reason))
        return item

    def get_build(self) -> Build:
        """This build's Build object, made on first use on this worker."""
        state = self.config.stash[STATE]
        build = state.builds.get(self.nodeid)
        if build is None:
            run, options = state.settings.run, state.settings.build
            scope = Scope(str(self.path), self.spec.id)
            build = Build(
                self.tree,
                self.spec,
                replace(options, jobs=options.jobs or _default_jobs(self.config)),
                output_dir=scope.folder(run.results),
                build_dir=scope.folder(run.build_dir) if run.build_dir else None,
                # A build dir given again is used again, as kbuild -b's: only
                # what changed is rebuilt (the README's "A build dir used again").
                incremental=run.build_dir is not None,
                runtime=state.make_runtime(self.config, self.spec.runtime),
                jobserver=state.jobserver.path if state.jobserver else None,
                record_extras=self._record_extras(),
            )
            state.builds[self.nodeid] = build
            build.prepare()
            self.config.hook.pytest_kbuild_build_started(config=self.config, build=build)
        return build

    def _record_extras(self) -> dict[str, Any]:
        """What metadata.json says that only the pytest layer knows."""
        state = self.config.stash[STATE]
        matrix: dict[str, Any] = {
            "path": str(self.path),
            "line": self.spec.line,
            "origin": self.spec.origin,
        }
        if self.spec.job:  # a TuxSuite plan's build: its job, what runs differently
            matrix["plan"] = {"job": self.spec.job, **dict(self.spec.notes)}
        mode = state.settings.run.jobserver
        return {
            "matrix": matrix,
            "pytest_selection": self.selection(),
            "jobserver": (
                state.jobserver.to_json()
                if state.jobserver
                else {"mode": mode, "slots": None, "fifo": None}
            ),
        }

    def selection(self, target: str | None = None) -> str:
        """The pytest command line that reruns exactly this build (or one
        target): its node id. A ``-k`` expression matches substrings, so
        ``-k 'arm64-gcc-defconfig and kernel'`` also ran debugkernel and the
        arm64-gcc-defconfig-kasan build."""
        rel = os.path.relpath(self.path, self.config.invocation_params.dir)
        node = f"{rel}::{self.spec.id}" + (f"::{target}" if target else "")
        return shlex.join(["pytest", f"--kbuild-matrix={rel}", node])

    def teardown(self) -> None:
        state = self.config.stash[STATE]
        build = state.builds.get(self.nodeid)
        if build is not None:
            build.finish()
            if build.unwritten:
                # Not an error of the last target (JUnit would list it twice).
                warnings.warn(
                    pytest.PytestWarning(f"{self.spec.id}: {build.unwritten}"), stacklevel=1
                )
            state.finished.append(self.nodeid)
            self.config.hook.pytest_kbuild_build_finished(
                config=self.config, build=build, result=build.result
            )


class TargetFailed(Exception):
    """Raised by BuildItem.runtest when its target failed."""

    def __init__(self, result: TargetResult) -> None:
        super().__init__(result.reason)
        self.result = result


class BuildItem(pytest.Item):
    """One target of one build; its duration is the target's own time."""

    parent: BuildNode

    def __init__(self, *, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.junit_system_out: str | None = None  # set once the target ran
        spec = self.parent.spec
        self.target = Target.load(target)
        self.user_properties += [
            ("arch", spec.arch),
            ("toolchain", spec.toolchain),
            ("kconfig", spec.kconfig),
            ("build_id", spec.id),
            ("target", self.target.name),
        ]
        if spec.job:
            self.user_properties.append(("job", spec.job))
        self.user_properties += [(f"plan_{k}", v) for k, v in spec.notes]
        if spec.notes:  # shown with the item's report (-rA, a failure)
            text = "\n".join(f"{k}: {v}" for k, v in spec.notes)
            self.add_report_section("setup", "kbuild plan", text)

    def setup(self) -> None:
        # Dependencies deselected with -k still run, here, so that the
        # call phase (and the reported duration) is this target's alone.
        try:
            build = self.parent.get_build()
            for dep in with_dependencies(self.target.depends):
                build.run_target(dep)
            # A host tool this target runs (rsync for headers) is missing:
            # this item errors before make runs, as for a missing compiler.
            missing = build.check_target_tools(self.target.name)
            if missing is not None:
                raise KbuildInfraError(missing.reason)
        except KbuildError as err:
            # Bad input or a machine that cannot build (missing compiler):
            # an error of this item, said plainly, without a traceback (nor
            # the KbuildError again as the context of pytest's exception).
            made = self.config.stash[STATE].builds.get(self.parent.nodeid)
            if made is not None:
                self.junit_system_out = self._system_out(made, [])
                self.user_properties.append(("reproducer", made.reproducer()))
            self.user_properties += [("status", "ERROR"), ("first_error", str(err))]
            msg = f"{self.parent.spec.id}::{self.name} ERROR: {err}"
            raise pytest.fail.Exception(msg, pytrace=False) from None

    def runtest(self) -> None:
        build = self.parent.get_build()
        result = build.run_target(self.target.name)
        log = self.config.stash[STATE].shown(build.output_dir / BUILD_LOG)
        self.user_properties += [
            ("status", result.status.value),
            ("duration", round(result.duration, 3)),
            ("queued", round(result.queued, 3)),
            ("errors", result.error_count),
            ("warnings", result.warnings),
            ("log", str(log)),
            ("reproducer", build.reproducer()),
            ("selection", self.parent.selection(self.name)),
        ]
        self.user_properties += baseline_properties(result.baseline)
        if result.attempts:  # --kbuild-retries ran it again
            self.user_properties.append(("attempts", len(result.attempts) + 1))
        # This target's compiler cache figures: cache_hits, cache_remote_hits...
        self.user_properties += [(f"cache_{k}", v) for k, v in result.cache.items()]
        blocked = (
            build.failed_dependency(self.target.name) if result.status == Status.SKIP else None
        )
        if blocked is not None:
            # Not a precondition (no CONFIG_MODULES): this target never ran.
            self.user_properties.append(("blocked_by", blocked))
        if result.status in (Status.FAIL, Status.ERROR, Status.WARNING):
            first = result.errors[0] if result.errors else result.reason
            relative = diagnostics.relative(first, build.tree, build.build_dir)
            self.user_properties.append(("first_error", relative))
        self.junit_system_out = self._system_out(build, result.diagnostics)
        if result.cases:  # reported one by one after this item (plugin/cases.py)
            setattr(self, cases.ITEM_ATTR, result.cases)
            logs = [Path(a.path) for a in result.artifacts if a.name.endswith(".log")]
            console = self.config.stash[STATE].shown(logs[0]) if logs else log
            setattr(self, cases.CONSOLE_ATTR, str(console))
        self.ihook.pytest_kbuild_target_finished(item=self, result=result)
        if result.status in (Status.FAIL, Status.ERROR):
            raise TargetFailed(result)
        if result.status == Status.SKIP:
            raise pytest.skip.Exception(result.reason, _use_item_location=True)
        if result.status == Status.WARNING:
            # Passed with problems: the item passes and pytest's warnings
            # summary says what went wrong (JUnit: status WARNING, first_error).
            lines = [f"{self.parent.spec.id}::{self.name} WARNING: {result.reason}"]
            lines += [f"  {e}" for e in result.errors[:5]]
            warnings.warn(TargetWarning("\n".join(lines)), stacklevel=1)

    def infra_error(self, excinfo: pytest.ExceptionInfo[BaseException] | None) -> bool:
        """Whether the call ended in an ERROR of the machine (a pytest error)."""
        if excinfo is None:
            return False
        if isinstance(excinfo.value, TargetFailed):
            return excinfo.value.result.status == Status.ERROR
        return isinstance(excinfo.value, KbuildInfraError)

    def _system_out(self, build: Build, diagnostics: list[dict[str, Any]]) -> str:
        """This target's JUnit <system-out> (plugin/junit.py)."""
        state = self.config.stash[STATE]
        root = state.settings.run.attach_root or self.config.rootpath
        files = [state.shown(build.output_dir / name) for name in JUNIT_ATTACHMENTS]
        return junit.system_out(diagnostics, files, root)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | ReprExceptionInfo:
        build = self.config.stash[STATE].builds.get(self.parent.nodeid)
        if build is None or not isinstance(excinfo.value, (KbuildError, TargetFailed)):
            return str(super().repr_failure(excinfo, style=style))
        where = (str(self.path), self.parent.spec.line or 0)
        if isinstance(excinfo.value, KbuildError):
            # Bad input or infrastructure found while building: the message
            # says what and where; a traceback would only hide it.
            lines = [
                f"{self.parent.spec.id}::{self.name} ERROR: {excinfo.value}",
                *self._log_lines(build),
                f"reproduce: {build.reproducer()}",
            ]
            return longrepr.failure(lines, *where)
        return longrepr.failure(self._failure_lines(build, excinfo.value.result), *where)

    def _log_lines(self, build: Build) -> list[str]:
        """Where build.log is, and in GitLab CI its URL among the job's
        artifacts: GitLab's test report links an attachment only for a
        <failure>, and shows an <error>'s text."""
        log = build.output_dir / BUILD_LOG
        lines = [f"log: {self.config.stash[STATE].shown(log)}"]
        url = folds.artifact_url(log, os.environ)
        return lines + [f"log in the job's artifacts: {url}"] if url else lines

    def _failure_lines(self, build: Build, result: TargetResult) -> list[str]:
        """The failure's text: the first error itself on the first line (the
        short summary's), why make stopped, the log, reproducer and rerun
        lines, then the target's last lines of build.log, unless an earlier
        target of the build failed on the same errors (kernel, then
        debugkernel): those lines are already shown above."""
        log = build.output_dir / BUILD_LOG
        # A fail-on policy's reason is the failure ("1 new warning (fail-on
        # new-warnings)"); its errors are the warnings that broke it.
        lead = bool(result.errors) and not result.failed_on and result.errors[0] != result.reason
        lines = [f"{self.parent.spec.id}::{self.name} {result.status.value}: "]
        if lead:
            lines[0] += diagnostics.relative(result.errors[0], build.tree, build.build_dir)
            lines.append(f"  {result.reason}")
            lines += [f"  {e}" for e in result.errors[1:]]
        else:
            lines[0] += result.reason
            lines += [f"  {e}" for e in result.errors if e != result.reason]
        lines += [
            f"  try {i} of {len(result.attempts) + 1}: {a['reason']}"
            for i, a in enumerate(result.attempts, 1)
        ]
        lines += [
            *self._log_lines(build),
            f"reproduce: {build.reproducer()}",
            f"rerun: {self.parent.selection(self.name)}",
        ]
        compared = result.baseline or {}
        fixed = compared.get("fixed_diagnostics") or []
        if fixed:
            lines.append(f"fixed since the baseline ({compared['fixed']}):")
            lines += [f"   {fixed_line(d)}" for d in fixed[:MAX_FIXED_SHOWN]]
        same = _same_failure(build, result)
        if same:
            lines += ["", f"--- the same errors as {same}: its lines of build.log are above ---"]
            return lines
        tail = _log_tail(log, result.log_start, result.log_end)
        if tail:
            lines += ["", f"--- last lines of {self.name} in build.log ---", tail]
        return lines

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.parent.spec.line
        return self.path, (line - 1 if line else None), f"{self.parent.spec.id}::{self.name}"


class UnavailableItem(pytest.Item):
    """A plan's target that cannot run here; always carries a skip marker."""

    parent: BuildNode

    def runtest(self) -> None:
        why = dict(self.parent.spec.unavailable).get(self.name, "not available")
        raise pytest.skip.Exception(why, _use_item_location=True)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.parent.spec.line
        return self.path, (line - 1 if line else None), f"{self.parent.spec.id}::{self.name}"


def baseline_properties(entry: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """JUnit/results.json properties of a target's comparison with the baseline."""
    if entry is None:
        return []
    if entry.get("absent"):
        return [("baseline", f"{entry['absent']} absent")]
    return [
        ("baseline", "compared"),
        ("new_warnings", entry["new_warnings"]),
        ("new_errors", entry["new_errors"]),
        ("fixed", entry["fixed"]),
        ("unchanged", entry["unchanged"]),
    ]


def fixed_line(d: dict[str, Any]) -> str:
    where = ":".join(str(d[k]) for k in ("file", "line") if d.get(k) not in (None, ""))
    flag = f" [{d['flag']}]" if d.get("flag") else ""
    return f"{where + ': ' if where else ''}{d.get('kind')}: {d.get('message')}{flag}"


def _same_failure(build: Build, result: TargetResult) -> str:
    """The earlier target of *build* that failed on exactly *result*'s
    errors, or "" (none did, or *result* names no error)."""
    if not result.errors:
        return ""
    for name, earlier in build.result.targets.items():
        if name == result.name:
            break
        if earlier.status in (Status.FAIL, Status.ERROR) and earlier.errors == result.errors:
            return name
    return ""


def _log_tail(path: Path, start: int, end: int, lines: int = 25) -> str:
    try:
        with path.open("rb") as f:
            f.seek(start)
            text = f.read(max(0, end - start)).decode(errors="replace")
    except OSError:
        return ""
    return logscan.tail(text, lines)


def _default_jobs(config: pytest.Config) -> int:
    """CPUs divided among xdist workers (at least one job each)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    return max(1, (os.cpu_count() or 1) // max(1, workers))
