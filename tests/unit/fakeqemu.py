"""A typed fake of qemu-system-*: a script on PATH that prints canned
consoles, one per run, and then exits or hangs as each one says."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

SCRIPT = """#!{python}
import json, os, sys, time
state = {state!r}
if sys.argv[1:] == ["--version"]:
    print("QEMU emulator version 7.2.99 (fake)")
    raise SystemExit(0)
plan = json.load(open(os.path.join(state, "plan.json")))
runs = os.path.join(state, "runs.jsonl")
n = sum(1 for _ in open(runs)) if os.path.exists(runs) else 0
with open(runs, "a") as f:
    f.write(json.dumps(sys.argv) + "\\n")
step = plan[min(n, len(plan) - 1)]
sys.stdout.write(step["console"])
sys.stdout.flush()
if step["then"] == "hang":
    time.sleep(3600)
raise SystemExit(step["exit"])
"""


@dataclass
class Console:
    """One run of the fake: what it prints, then ``exit`` or ``hang``."""

    text: str
    then: str = "exit"
    exit: int = 0


@dataclass
class FakeQemu:
    """Install with ``FakeQemu(bin_dir, "qemu-system-x86_64", [Console(...)])
    .install()`` and put *bin_dir* first on PATH; ``runs`` are the argv of
    each boot (not --version), in order. The last console repeats."""

    bin_dir: Path
    name: str
    consoles: list[Console] = field(default_factory=list)

    @property
    def state(self) -> Path:
        return self.bin_dir / f"{self.name}.state"

    def install(self) -> FakeQemu:
        self.state.mkdir(parents=True, exist_ok=True)
        plan = [{"console": c.text, "then": c.then, "exit": c.exit} for c in self.consoles]
        (self.state / "plan.json").write_text(json.dumps(plan))
        script = self.bin_dir / self.name
        script.write_text(SCRIPT.format(python=sys.executable, state=str(self.state)))
        script.chmod(0o755)
        return self

    @property
    def runs(self) -> list[list[str]]:
        path = self.state / "runs.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]
