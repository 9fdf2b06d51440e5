"""The package's layers (STYLE.md section 1, the README's code map): every
import of a pytest_kbuild module, at module level, inside a function or
under TYPE_CHECKING, points to its own layer or a lower one; the imports
form no cycle; only the pytest layer imports pytest. Failures name the
file and line of the import."""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_kbuild

PACKAGE = Path(pytest_kbuild.__file__).parent

# Top to bottom; a module's layer is its first path part under pytest_kbuild/
# (a package, or a top-level module without .py). __init__ is the package's
# own __init__.py, which names the public API (imported lazily).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "plugin", "cli", "hookspecs"),
    ("report",),
    ("build", "matrix"),
    ("boot", "diagnostics", "runtime"),
    ("run",),
    ("spec", "options", "settings"),
    ("definitions",),
    ("kconfig", "parsers", "results", "errors"),
)
# Same layer, and still neither may import the other.
APART = (frozenset({"build", "matrix"}),)
# Who may import pytest (and its private modules, and pytest-xdist).
PYTEST_LAYER = ("plugin", "hookspecs")
PYTEST_MODULES = ("pytest", "_pytest", "xdist")


@dataclass(frozen=True)
class Import:
    source: str  # importing module, e.g. pytest_kbuild.build.build
    target: str  # imported module (or package), e.g. pytest_kbuild.results
    path: Path
    line: int

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root.parent)}:{self.line}"


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package at *root*, by dotted name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(root: Path) -> list[Import]:
    """Every import statement of the package at *root*, wherever it stands."""
    known = modules(root)
    found = []
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*up, base] if base else up)
                # `from pkg import mod` imports the module mod
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
                ]
            else:
                continue
            found += [Import(name, t, path, node.lineno) for t in dict.fromkeys(targets)]
    return found


def layer_of(module: str, root_name: str) -> str:
    parts = module.split(".")[1:]
    return parts[0] if parts else "__init__"


def rank(layer: str) -> int:
    for i, names in enumerate(LAYERS):
        if layer in names:
            return i
    raise AssertionError(f"{layer!r} is in no layer of LAYERS: add it there and to STYLE.md")


def upward(root: Path) -> list[str]:
    """Each import that points to a higher layer (or across APART)."""
    bad = []
    for imp in imports(root):
        if not imp.target.startswith(root.name + ".") and imp.target != root.name:
            continue
        src, dst = layer_of(imp.source, root.name), layer_of(imp.target, root.name)
        if rank(dst) < rank(src) or src != dst and frozenset({src, dst}) in APART:
            bad.append(f"{imp.where(root)}: {imp.source} ({src}) imports {imp.target} ({dst})")
    return bad


def cycles(root: Path) -> list[str]:
    """One line per import cycle among the package's modules."""
    edges: dict[str, dict[str, Import]] = {}
    known = modules(root)
    for imp in imports(root):
        if imp.target in known and imp.target != imp.source:
            edges.setdefault(imp.source, {}).setdefault(imp.target, imp)
    found, done, stack = [], set(), []

    def visit(node: str) -> None:
        stack.append(node)
        for nxt in edges.get(node, {}):
            if nxt in stack:
                loop = stack[stack.index(nxt) :]
                steps = [edges[a][b] for a, b in zip(loop, [*loop[1:], nxt], strict=True)]
                found.append(
                    " -> ".join(f"{s.source} ({s.where(root)})" for s in steps) + f" -> {nxt}"
                )
            elif nxt not in done:
                visit(nxt)
        stack.pop()
        done.add(node)

    for name in sorted(known):
        if name not in done:
            visit(name)
    return found


def pytest_importers(root: Path) -> list[str]:
    bad = []
    for imp in imports(root):
        top = imp.target.split(".")[0]
        if top in PYTEST_MODULES and layer_of(imp.source, root.name) not in PYTEST_LAYER:
            bad.append(f"{imp.where(root)}: {imp.source} imports {imp.target}")
    return bad


def test_every_import_points_to_its_own_or_a_lower_layer():
    assert upward(PACKAGE) == []


def test_the_imports_form_no_cycle():
    assert cycles(PACKAGE) == []


def test_only_the_pytest_layer_imports_pytest():
    assert pytest_importers(PACKAGE) == []


def test_every_package_and_top_level_module_has_a_layer():
    for name in modules(PACKAGE):
        rank(layer_of(name, PACKAGE.name))


@pytest.fixture
def copy(tmp_path):
    """The package's modules in a scratch copy, to plant bad imports in."""
    dest = tmp_path / PACKAGE.name
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("data", "__pycache__"))
    return dest


def plant(path: Path, line: str) -> int:
    """Add *line* at the end of *path* (a new module if none); its line number."""
    text = path.read_text() if path.exists() else ""
    path.write_text(text + line + "\n")
    return len(text.splitlines()) + 1


def added(check, root: Path, *plants: tuple[Path, str]) -> tuple[list[str], list[int]]:
    """What *check* finds in *root* once *plants* are added, and not before;
    the planted lines' numbers."""
    before = set(check(root))
    lines = [plant(path, line) for path, line in plants]
    return [b for b in check(root) if b not in before], lines


@pytest.mark.parametrize(
    ("where", "planted", "line", "says"),
    [
        (
            "results.py",
            "def f():\n    from .plugin import hooks  # inside a function",
            1,
            "results (results) imports {p}.plugin.hooks (plugin)",
        ),
        (
            "spec.py",
            "if TYPE_CHECKING:\n    from .build.build import Build",
            1,
            "spec (spec) imports {p}.build.build (build)",
        ),
        (
            "build/artifacts.py",
            "from ..matrix import yamlload",
            0,
            "build.artifacts (build) imports {p}.matrix.yamlload (matrix)",
        ),
    ],
    ids=["upward-in-a-function", "under-type-checking", "build-and-matrix-apart"],
)
def test_a_planted_import_fails_with_its_file_and_line(copy, where, planted, line, says):
    bad, [n] = added(upward, copy, (copy / where, planted))
    p = PACKAGE.name
    assert bad == [f"{p}/{where}:{n + line}: {p}.{says.format(p=p)}"]


def test_a_planted_cycle_is_found(copy):
    plants = (copy / "kconfig" / "remote.py", "def f():\n    from . import _planted")
    found, _ = added(
        cycles,
        copy,
        (copy / "kconfig" / "_planted.py", "from . import remote"),
        plants,
    )
    assert len(found) == 1 and "remote" in found[0] and "_planted" in found[0], found


def test_a_planted_pytest_import_outside_the_pytest_layer_fails(copy):
    bad, [n] = added(pytest_importers, copy, (copy / "run" / "signals.py", "import pytest"))
    assert bad == [f"{PACKAGE.name}/run/signals.py:{n}: {PACKAGE.name}.run.signals imports pytest"]


def test_the_readmes_layer_table_is_this_order():
    readme = (PACKAGE.parent / "README.md").read_text()
    table = readme.split("| layer (top to bottom) | may import |\n| --- | --- |\n", 1)[1]
    rows = [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| ")][
        : len(LAYERS)
    ]
    named = [
        {w.strip("`/").removesuffix(".py") for w in re.findall(r"`[^`]+`", row)} for row in rows
    ]
    assert named == [set(layer) for layer in LAYERS]
