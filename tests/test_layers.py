"""The host code's folders are its pipeline, and each folder imports only the ones below it.

    core ← plan ← corpus ← state ← execute ← workflow ← followup ← cli
    render: core only.  adopt: core and plan.  cell, resources: nothing of the host.

Every import counts — top-level, inside a function, under TYPE_CHECKING — since each
one is a dependency a reader has to follow. docs/explanation/layout.md shows the same
table.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "compat"

#: what each folder may import besides itself (`cell` and `resources` import no host code)
LOWER = {
    "cell": set(),
    "resources": {"cell"},
    "core": {"cell", "resources"},
    "plan": {"cell", "resources", "core"},
    "corpus": {"cell", "resources", "core", "plan"},
    "state": {"cell", "resources", "core", "plan", "corpus"},
    "execute": {"cell", "resources", "core", "plan", "corpus", "state"},
    "render": {"cell", "resources", "core"},
    "adopt": {"cell", "resources", "core", "plan"},
}
LOWER["workflow"] = LOWER["execute"] | {"execute", "render", "adopt"}
LOWER["followup"] = LOWER["workflow"] | {"workflow"}
LOWER["cli"] = LOWER["followup"] | {"followup"}
#: modules at the package's top: the lazy public API and `python -m compat`
TOP = {"__init__": set(), "__main__": {"cli"}}

#: the limits the code keeps outside the case corpus
MODULE_LINES = 350
FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _folder(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported_folders(path: Path) -> dict[str, int]:
    """Each host folder the module imports from, with the line of the first import."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "compat":  # `from compat import resources`
                names = [f"compat.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "compat" and len(parts) > 1:
                found.setdefault(parts[1], node.lineno)
    return found


def test_every_folder_is_in_the_table() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert folders == set(LOWER), "a new folder needs a row in LOWER and in the layout page"
    assert modules == set(TOP), "host modules live in a folder of their stage, not at the top"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_imports_only_the_folders_below_its_own(path: Path) -> None:
    folder = _folder(path)
    allowed = TOP[folder] if folder in TOP else LOWER[folder]
    wrong = {
        name: line
        for name, line in _imported_folders(path).items()
        if name != folder and name not in allowed and name in LOWER
    }
    assert not wrong, (
        f"{path.relative_to(ROOT)} imports {wrong} (line numbers); "
        f"{folder} may import {sorted(allowed)}"
    )


def test_there_are_no_cycles_between_folders() -> None:
    graph: dict[str, set[str]] = {name: set() for name in LOWER}
    for path in _modules():
        folder = _folder(path)
        if folder in LOWER:
            graph[folder] |= {f for f in _imported_folders(path) if f in LOWER and f != folder}
    done: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> None:
        assert node not in trail, f"import cycle: {' -> '.join((*trail, node))}"
        if node not in done:
            for target in sorted(graph[node]):
                visit(target, (*trail, node))
            done.add(node)

    for name in sorted(graph):
        visit(name, ())


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    return ".".join(relative.parts[:-1] if relative.name == "__init__" else relative.parts)


def _imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The host modules `path` imports (a package's `__init__` left out: it holds nothing)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in modules else node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found & modules


def test_there_are_no_cycles_between_modules() -> None:
    """Inside a folder too, modules form an order: a module that needs a type of the one
    that imports it moves the type below both."""
    paths = {_module_name(p): p for p in _modules() if p.name != "__init__.py"}
    graph = {name: _imported_modules(path, set(paths)) - {name} for name, path in paths.items()}
    done: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> None:
        assert node not in trail, (
            f"import cycle: {' -> '.join((*trail[trail.index(node) :], node))}"
        )
        if node not in done:
            for target in sorted(graph[node]):
                visit(target, (*trail, node))
            done.add(node)

    for name in sorted(graph):
        visit(name, ())


def test_the_table_itself_has_no_cycle() -> None:
    """The allowed-imports table is a strict order: no folder may (even transitively)
    import one that may import it."""
    for folder, lower in LOWER.items():
        for other in lower:
            assert folder not in LOWER[other], f"{folder} and {other} may import each other"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_and_functions_stay_small(path: Path) -> None:
    text = path.read_text()
    assert text.count("\n") <= MODULE_LINES, f"{path.relative_to(ROOT)}: split it by concept"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > FUNCTION_LINES
    ]
    assert not long, f"{path.relative_to(ROOT)}: {', '.join(long)} over {FUNCTION_LINES} lines"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_line_holds_one_assignment(path: Path) -> None:
    """`a, b = x, y` packs two statements into one line the formatter cannot lay out:
    one assignment a line (unpacking a call's tuple is one assignment, and stays)."""
    packed = [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Tuple)
        and isinstance(node.value, ast.Tuple)
    ]
    assert not packed, f"{path.relative_to(ROOT)}: {'; '.join(packed)}"
