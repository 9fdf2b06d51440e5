"""Resolve a kconfig (make target, file, in-tree file or URL) and kconfig_add
fragments into the commands that make a .config, and check that every
literal option asked for survived olddefconfig."""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import KconfigError
from .remote import fetch, is_http

MERGE_CONFIG = "scripts/kconfig/merge_config.sh"

_SYMBOL = r"CONFIG_[A-Za-z0-9_]+"
_VALUE = r'(?:y|m|n|"(?:[^"\\]|\\.)*"|-?[0-9]+|0x[0-9a-fA-F]+)'
_LITERAL = re.compile(rf"^(?P<sym>{_SYMBOL})=(?P<val>{_VALUE})$")
_NOT_SET = re.compile(rf"^# (?P<sym>{_SYMBOL}) is not set$")
_CONFIG_TARGET = re.compile(r"^[A-Za-z0-9_.+-]*config$")
_FRAGMENT_TARGET = re.compile(r"^[A-Za-z0-9_+-]+\.config$")
_CONFIG_LINE = re.compile(rf"^(?P<sym>{_SYMBOL})=(?P<val>.*)$")


def is_url(value: str) -> bool:
    return is_http(value)


def parse_literal(value: str) -> tuple[str, str | None] | None:
    """(symbol, value) for ``CONFIG_X=v`` or (symbol, None) for ``# CONFIG_X is
    not set`` / ``=n``; None when *value* is not a literal."""
    m = _LITERAL.match(value.strip())
    if m:
        return m["sym"], None if m["val"] == "n" else m["val"]
    m = _NOT_SET.match(value.strip())
    return (m["sym"], None) if m else None


def validate_kconfig(value: str) -> None:
    """Syntax check of a kconfig value (files are looked for at build time)."""
    if not value.strip():
        raise KconfigError(value, "empty; give a *config target, a path or a URL")
    if value.startswith("CONFIG_") or value.startswith("#"):
        raise KconfigError(value, "an option belongs in kconfig_add, not kconfig")
    if "\0" in value:
        raise KconfigError(value, "holds a NUL byte")


def validate_fragment(value: str) -> None:
    """Syntax check of one kconfig_add entry."""
    v = value.strip()
    if not v:
        raise KconfigError(value, "empty fragment")
    if v.startswith(("CONFIG_", "#")) and parse_literal(v) is None:
        raise KconfigError(
            value,
            'not a valid option; accepted: CONFIG_X=y|m|n|"string"|123|0x1f'
            ' or "# CONFIG_X is not set"',
        )
    if v.startswith("make:") and not v[5:].strip():
        raise KconfigError(value, "make: needs a target, e.g. make:kvm_guest.config")
    if v.startswith("make:") and ("=" in v or v[5:].strip().startswith("-")):
        raise KconfigError(
            value, "make: takes one target, not a variable or option, e.g. make:kvm_guest.config"
        )
    if "\0" in v:
        raise KconfigError(value, "holds a NUL byte")


def parse_config(text: str) -> dict[str, str | None]:
    """Symbol -> value (None when not set) from .config text."""
    out: dict[str, str | None] = {}
    for line in text.splitlines():
        m = _CONFIG_LINE.match(line)
        if m:
            out[m["sym"]] = m["val"]
            continue
        m = _NOT_SET.match(line)
        if m:
            out[m["sym"]] = None
    return out


@dataclass(frozen=True)
class Dropped:
    """A literal option asked for that the final .config does not hold."""

    symbol: str
    wanted: str | None
    final: str | None

    def __str__(self) -> str:
        want = (
            f"{self.symbol}={self.wanted}" if self.wanted is not None else f"{self.symbol} not set"
        )
        got = "is not set" if self.final is None else f"is {self.symbol}={self.final}"
        return f"{want} was asked for, but the final .config {got}"


def check_options(wanted: dict[str, str | None], config_text: str) -> list[Dropped]:
    """Every wanted option whose final value differs."""
    final = parse_config(config_text)
    return [
        Dropped(sym, want, final.get(sym)) for sym, want in wanted.items() if final.get(sym) != want
    ]


def unmet(requirements: tuple[str, ...], config_text: str) -> list[str]:
    """The ``CONFIG_X=v`` requirements that .config does not meet."""
    met_ = set(met(requirements, config_text))
    return [req for req in requirements if req not in met_]


def met(conditions: tuple[str, ...], config_text: str) -> list[str]:
    """The ``CONFIG_X=v`` conditions that .config meets."""
    final = parse_config(config_text)
    out = []
    for cond in conditions:
        lit = parse_literal(cond)
        if lit is not None and final.get(lit[0]) == lit[1]:
            out.append(cond)
    return out


@dataclass
class ConfigPlan:
    """What the config target runs, what it asked for, where inputs came from."""

    commands: list[list[str]] = field(default_factory=list)
    wanted: dict[str, str | None] = field(default_factory=dict)
    sources: list[dict[str, str]] = field(default_factory=list)


def _plan_base(
    p: ConfigPlan,
    kconfig: str,
    tree: Path,
    base_dir: Path,
    config: Path,
    log: Callable[[str], None],
) -> bool:
    """Add the base config's command or file to *p*; whether it then needs
    ``make olddefconfig`` (a config file does, a make target does not)."""
    if (
        _CONFIG_TARGET.match(kconfig)
        and _find(kconfig, base_dir, tree) is None
        and not is_url(kconfig)
    ):
        p.commands.append(["make", kconfig])
        p.sources.append({"kconfig": kconfig, "kind": "make target"})
        return False
    src = _materialise(kconfig, tree, base_dir, config, log)
    p.sources.append({"kconfig": kconfig, **src})
    return True


def plan(
    kconfig: str,
    fragments: tuple[str, ...],
    tree: Path,
    base_dir: Path,
    build_dir: Path,
    log: Callable[[str], None] = lambda line: None,
) -> ConfigPlan:
    """Prepare inputs in *build_dir* (fetch URLs, copy files, write literal
    fragments) and return the commands that make ``build_dir/.config``;
    *log* gets a line for each redirect a URL took.

    Commands starting with ``make`` are Kbuild calls (run in the tree);
    others run in *build_dir*.
    """
    p = ConfigPlan()
    config = build_dir / ".config"
    needs_olddefconfig = _plan_base(p, kconfig, tree, base_dir, config, log)
    pending: list[str] = []

    def flush() -> None:
        if pending:
            # merge_config.sh makes its temporary files in the current
            # directory: run it in the build directory, never in the tree.
            script = str(tree / MERGE_CONFIG)
            p.commands.append([script, "-m", "-O", str(build_dir), str(config), *pending])
            pending.clear()

    for i, frag in enumerate(fragments):
        frag = frag.strip()
        needs_olddefconfig = True
        lit = parse_literal(frag)
        dest = build_dir / f"kbuild-fragment-{i}.config"
        if lit is not None:
            p.wanted[lit[0]] = lit[1]
            dest.write_text(
                f"{lit[0]}={lit[1]}\n" if lit[1] is not None else f"# {lit[0]} is not set\n"
            )
            pending.append(str(dest))
            p.sources.append({"fragment": frag, "kind": "literal"})
        elif frag.startswith("make:"):
            flush()
            p.commands.append(["make", frag[5:].strip()])
            p.sources.append({"fragment": frag, "kind": "make target"})
        elif _FRAGMENT_TARGET.match(frag) and _find(frag, base_dir, tree) is None:
            flush()
            p.commands.append(["make", frag])
            p.sources.append({"fragment": frag, "kind": "make target"})
        else:
            src = _materialise(frag, tree, base_dir, dest, log)
            pending.append(str(dest))
            p.sources.append({"fragment": frag, **src})
    flush()
    if needs_olddefconfig:
        p.commands.append(["make", "olddefconfig"])
    return p


def run_plan(
    plan: ConfigPlan,
    build_dir: Path,
    run: Callable[[list[str]], int],
    log: Callable[[str], None],
) -> tuple[bool, str]:
    """Run *plan*'s commands with *run* (exit status), then check that every
    literal option asked for is in the final .config; (passed, why not)."""
    for cmd in plan.commands:
        if run(cmd) != 0:
            return False, f"{shlex.join(cmd[:2])} failed"
    config = build_dir / ".config"
    if not config.is_file():
        return False, "no .config was produced"
    dropped = check_options(plan.wanted, config.read_text(errors="replace"))
    if dropped:
        lines = [str(d) for d in dropped]
        log("E: options asked for but missing from the final .config:")
        for line in lines:
            log(f"E:   {line}")
        return False, "; ".join(lines)
    return True, ""


def absolute(value: str, base_dir: Path) -> str:
    """*value* with a file relative to *base_dir* (the matrix's directory)
    made absolute, so a reproducer works from any directory."""
    if is_url(value) or Path(value).is_absolute() or parse_literal(value) is not None:
        return value
    candidate = base_dir / value
    return str(candidate.resolve()) if _is_file(candidate) else value


def _find(value: str, base_dir: Path, tree: Path) -> Path | None:
    """A local file: relative to the matrix (or absolute), else in the tree."""
    if is_url(value):
        return None
    for candidate in (base_dir / value, tree / value):
        if _is_file(candidate):
            return candidate
    return None


def _is_file(path: Path) -> bool:
    """Path.is_file, False too for a name the system cannot look up (too
    long, a loop of links): a kconfig value is any text of the matrix."""
    try:
        return path.is_file()
    except OSError:
        return False


def _materialise(
    value: str, tree: Path, base_dir: Path, dest: Path, log: Callable[[str], None]
) -> dict[str, str]:
    """Copy or fetch *value* to *dest*; describe where it came from (a URL:
    where it ended after redirects, ``final_url``)."""
    where: dict[str, str] = {}
    if is_url(value):
        fetched = fetch(value, dest)
        for line in fetched.log_lines():
            log(line)
        kind, where = "url", {"final_url": fetched.final_url}
    else:
        src = _find(value, base_dir, tree)
        if src is None:
            raise KconfigError(
                value,
                f"no such file (looked in {base_dir} and in the tree {tree}); "
                "accepted: a *config make target, a file path, an in-tree path or an http(s) URL",
            )
        shutil.copyfile(src, dest)
        kind = "in-tree file" if src.resolve().is_relative_to(tree.resolve()) else "file"
    digest = hashlib.sha256(dest.read_bytes()).hexdigest()
    return {"kind": kind, **where, "sha256": digest}
