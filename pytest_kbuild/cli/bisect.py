"""``pytest-kbuild bisect``: the first commit at which one build of a matrix
fails, or gains a diagnostic, found by ``git bisect`` in a worktree of the
tree. The user's checkout (its files, HEAD, index and own bisect) is never
touched; the worktree goes at the end.

Each commit is judged as ``git bisect run`` would judge the exit of
``kbuild``: a FAIL is bad, a PASS good, an ERROR of the machine (missing
tool, out of memory, timeout) skips the commit. The steps share one build
directory, so each one rebuilds only what the commit changed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..build.build import Build
from ..build.result import BuildResult
from ..definitions.targets import with_dependencies
from ..errors import KbuildInfraError, KbuildUserError
from ..options import BuildOptions
from ..results import Status
from ..spec import BuildSpec

LOG = "bisect.log"
GOOD, BAD, SKIP = "good", "bad", "skip"
_HASH = re.compile(r"[0-9a-f]{40}")
_LEFT = re.compile(r"\(roughly (\d+) steps?\)")


class BisectError(KbuildUserError):
    """A bisect that cannot start: not a repository, unknown revisions, a
    good revision that fails or a bad one that passes."""


@dataclass(frozen=True)
class Step:
    """One tested commit."""

    commit: str
    subject: str
    verdict: str  # good, bad or skip
    why: str
    seconds: float

    def line(self) -> str:
        took = f"{self.seconds:.1f} s"
        return f"{self.commit[:12]} {self.verdict:<4} in {took}: {self.subject} ({self.why})"


@dataclass
class Outcome:
    """What the bisect found: the first bad commit, or the commits it could
    not tell apart because some were skipped."""

    first_bad: str = ""
    subject: str = ""
    candidates: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    reproducer: str = ""
    log: Path | None = None


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """git -C *repo* *args*; a failure with *check* is a BisectError."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise KbuildInfraError(
            "bisect needs git (Debian package git), which is not in PATH"
        ) from None
    if check and done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise BisectError(f"git {' '.join(args)} in {repo}: {said[-1] if said else 'failed'}")
    return done


def commit_of(repo: Path, rev: str, flag: str) -> str:
    """The full hash of *rev* (given as *flag*), or an error that names it."""
    done = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if done.returncode != 0 or not rev:
        raise BisectError(f"{flag} {rev!r} is not a commit of the repository {repo}")
    return done.stdout.strip()


class Bisector:
    """Bisects *spec* (its targets, or *target* and its dependencies) of the
    git repository *tree* between *good* and *bad* in *workdir*.

    With *diagnostic*, a commit is bad when a diagnostic of the build
    contains that text; a commit whose build fails without it is skipped.
    *say* receives one line per step.
    """

    def __init__(
        self,
        tree: Path,
        spec: BuildSpec,
        options: BuildOptions,
        workdir: Path,
        *,
        good: str,
        bad: str,
        target: str = "",
        diagnostic: str = "",
        say: Callable[[str], None] = print,
    ) -> None:
        top = git(tree, "rev-parse", "--show-toplevel", check=False)
        if top.returncode != 0:
            raise BisectError(f"the tree {tree} is not a git repository: bisect needs its history")
        self.repo = Path(top.stdout.strip())
        self.subdir = tree.resolve().relative_to(self.repo.resolve())
        self.good, self.bad = (
            commit_of(self.repo, good, "--good"),
            commit_of(self.repo, bad, "--bad"),
        )
        if git(
            self.repo, "merge-base", "--is-ancestor", self.good, self.bad, check=False
        ).returncode:
            raise BisectError(f"--good {good!r} is not an ancestor of --bad {bad!r}")
        if target and target not in spec.targets:
            known = ", ".join(spec.targets)
            raise BisectError(
                f"--target {target!r} is not a target of build {spec.id}; it has: {known}"
            )
        self.spec, self.options, self.say = spec, options, say
        self.targets = list(with_dependencies([target] if target else spec.targets))
        self.diagnostic = diagnostic
        self.workdir = workdir.resolve()
        self.worktree = self.workdir / "tree"
        self.outcome = Outcome(log=self.workdir / LOG)
        self._left = ""  # how many steps git bisect expects after the next
        self._last: Build | None = None  # the last step's build (an image's digest)

    def run(self) -> Outcome:
        if self.worktree.exists():  # an earlier bisect here that did not end
            git(self.repo, "worktree", "remove", "--force", str(self.worktree), check=False)
            shutil.rmtree(self.worktree, ignore_errors=True)
        self.workdir.mkdir(parents=True, exist_ok=True)
        git(self.repo, "worktree", "add", "--detach", str(self.worktree), self.bad)
        try:
            return self._bisect()
        finally:
            self._write_log()
            git(self.worktree, "bisect", "reset", check=False)
            git(self.repo, "worktree", "remove", "--force", str(self.worktree), check=False)

    def _bisect(self) -> Outcome:
        for rev, flag, wanted in ((self.bad, "--bad", BAD), (self.good, "--good", GOOD)):
            git(self.worktree, "checkout", "--quiet", "--detach", rev)
            step = self._test()
            if step.verdict == SKIP:
                raise KbuildInfraError(f"bisect cannot test {flag} {rev[:12]}: {step.why}")
            if step.verdict != wanted:
                hint = "an older good revision" if flag == "--good" else "a revision that fails"
                raise BisectError(f"{flag} {rev[:12]} is {step.verdict} ({step.why}): give {hint}")
        said = self._bisect_git("start", self.bad, self.good)
        while True:
            if "is the first bad commit" in said:
                return self._found(said.split()[0])
            if "only 'skip'ped commits left" in said:
                self.outcome.candidates = [w for w in said.split() if _HASH.fullmatch(w)]
                return self.outcome
            step = self._test()
            said = self._bisect_git(step.verdict)

    def _bisect_git(self, *args: str) -> str:
        """``git bisect ARGS`` in the worktree: what it printed (it exits
        non-zero when only skipped commits are left)."""
        done = git(self.worktree, "bisect", *args, check=False)
        if done.returncode != 0 and "only 'skip'ped" not in done.stdout:
            said = (done.stderr.strip() or done.stdout.strip() or "failed").splitlines()[-1]
            raise BisectError(f"git bisect {' '.join(args)} in {self.worktree}: {said}")
        left = _LEFT.search(done.stdout)  # "(roughly 3 steps)"
        more = left and int(left.group(1))
        self._left = f", about {more} more after it" if more else ", the last" if left else ""
        return done.stdout

    def _test(self) -> Step:
        """Build the worktree's HEAD and judge it."""
        commit = git(self.worktree, "rev-parse", "HEAD").stdout.strip()
        subject = git(self.worktree, "log", "-1", "--format=%s").stdout.strip()
        n = len(self.outcome.steps) + 1
        build = Build(
            self.worktree / self.subdir,
            self.spec,
            self.options,
            output_dir=self.workdir / "steps" / f"{n:02d}-{commit[:12]}",
            build_dir=self.workdir / "build",
            incremental=True,
        )
        started = time.monotonic()
        verdict, why = judge(build.run(self.targets), self.targets, self.diagnostic)
        self._last = build
        step = Step(commit, subject, verdict, why, time.monotonic() - started)
        self.outcome.steps.append(step)
        self.say(f"I: bisect: step {n}{self._left}: {step.line()}")
        return step

    def _found(self, commit: str) -> Outcome:
        o = self.outcome
        o.first_bad = commit
        o.subject = git(self.repo, "log", "-1", "--format=%s", commit).stdout.strip()
        assert self._last is not None  # the bad and good revisions were built
        line = self._last.reproducer(self.repo / self.subdir)
        o.reproducer = f"git -C {self.repo} switch --detach {commit[:12]} && {line}"
        return o

    def _write_log(self) -> None:
        """Our lines, then ``git bisect log`` (``git bisect replay`` reads it)."""
        assert self.outcome.log is not None
        lines = [f"# {s.line()}" for s in self.outcome.steps]
        replay = git(self.worktree, "bisect", "log", check=False)
        if replay.returncode == 0:
            lines.append(replay.stdout.rstrip())
        self.outcome.log.write_text("\n".join(lines) + "\n")


def judge(result: BuildResult, targets: Sequence[str], diagnostic: str = "") -> tuple[str, str]:
    """good, bad or skip, and why: git bisect run's reading of kbuild's exit.
    With *diagnostic*, bad means a diagnostic holds that text."""
    ran = [result.targets[t] for t in targets if t in result.targets]
    broken = next((r for r in ran if r.status == Status.ERROR), None)
    if broken is not None:
        return SKIP, f"{broken.name} ERROR: {broken.reason}"
    if result.status == Status.INTERRUPTED:
        raise KeyboardInterrupt("interrupted")
    failed = next((r for r in ran if r.status == Status.FAIL), None)
    first = (failed.errors or [failed.reason])[0] if failed else ""
    if diagnostic:
        for r in ran:
            for d in r.diagnostics:
                if any(diagnostic in raw for raw in d.get("raw") or [d.get("message", "")]):
                    return BAD, f"{r.name} has {diagnostic!r}"
        if failed is not None:
            return SKIP, f"{failed.name} FAIL without {diagnostic!r}: {first}"
        return GOOD, f"no {diagnostic!r}"
    if failed is not None:
        return BAD, f"{failed.name} FAIL: {first}"
    return GOOD, "PASS"


def describe(outcome: Outcome) -> Sequence[str]:
    """The lines ``pytest-kbuild bisect`` ends with."""
    if outcome.first_bad:
        return [
            f"I: first bad commit: {outcome.first_bad} {outcome.subject}",
            f"I: to reproduce: {outcome.reproducer}",
            f"I: bisect log: {outcome.log} ({len(outcome.steps)} builds)",
        ]
    return [
        "E: only skipped commits are left; the first bad commit is one of: "
        + " ".join(c[:12] for c in outcome.candidates),
        f"I: bisect log: {outcome.log} ({len(outcome.steps)} builds)",
    ]
