"""Tell a build broken by the machine from one broken by the kernel.

A make that failed because its compiler was OOM-killed or the disk filled
up says nothing about the sources: its target is ERROR, not FAIL, and a
retry may pass. The signatures live in data/infra.yaml. No pytest import.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import yaml

from ..definitions import DATA_DIR
from ..errors import DefinitionError

INFRA_FILE = DATA_DIR / "infra.yaml"


@dataclass(frozen=True)
class Signature:
    name: str
    pattern: re.Pattern[str]
    exits: tuple[int, ...]
    retryable: bool
    fix: str
    free_space: bool = False
    before_retry: str = ""


@dataclass(frozen=True)
class InfraFailure:
    """What broke (``out-of-memory``, ``disk-full``), the log line that says
    so, and what to do."""

    name: str
    line: str
    retryable: bool
    fix: str
    free_space: bool = False
    before_retry: str = ""

    @property
    def reason(self) -> str:
        seen = f" ({self.line})" if self.line else ""
        return f"{self.name.replace('-', ' ')}{seen}: {self.fix}"


@functools.cache
def signatures() -> tuple[Signature, ...]:
    where = str(INFRA_FILE)
    try:
        entries = yaml.safe_load(INFRA_FILE.read_text())
    except yaml.YAMLError as err:
        raise DefinitionError(where, f"invalid YAML: {err}") from None
    if not isinstance(entries, list):
        raise DefinitionError(where, "top level must be a list of signatures")
    out = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not {"name", "pattern", "fix"} <= set(e):
            raise DefinitionError(where, f"entry {i} needs name, pattern and fix")
        # YAML's folded scalar joins the alternatives with spaces: drop them.
        text = re.sub(r"\|\s+", "|", str(e["pattern"]).strip())
        try:
            pattern = re.compile(text, re.MULTILINE)
        except re.error as err:
            raise DefinitionError(where, f"{e['name']}: bad pattern: {err}") from None
        exits = tuple(int(x) for x in e.get("exit") or ())
        retry, before = bool(e.get("retryable")), str(e.get("before_retry") or "")
        sig = Signature(
            e["name"], pattern, exits, retry, e["fix"], bool(e.get("free_space")), before
        )
        out.append(sig)
    return tuple(out)


def signature(name: str) -> Signature | None:
    """The signature called *name* (a TargetResult's ``infra``), if any."""
    return next((s for s in signatures() if s.name == name), None)


def classify(log: str, exit_status: int | None = None) -> InfraFailure | None:
    """The machine failure that *log* (a failed target's slice of build.log)
    and make's *exit_status* show, or None: the kernel's own failure."""
    for sig in signatures():
        match = sig.pattern.search(log)
        if match is not None:
            return _failure(sig, _line_at(log, match.start()))
    for sig in signatures():  # no line says it: the exit status may
        if exit_status is not None and exit_status in sig.exits:
            return _failure(sig, f"exit status {exit_status}")
    return None


def _failure(sig: Signature, line: str) -> InfraFailure:
    return InfraFailure(sig.name, line, sig.retryable, sig.fix, sig.free_space, sig.before_retry)


def _line_at(text: str, pos: int, width: int = 160) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start : end if end >= 0 else len(text)].strip()
    return line if len(line) <= width else line[: width - 3] + "..."
