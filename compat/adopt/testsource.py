"""Where a project's tests are and how the project itself runs them, read from what it
has: its noxfile's and tox.ini's test commands, its CI workflows' pytest and unittest
lines, `[tool.pytest.ini_options] testpaths`, then the folders tests live in (tests/,
test/, and `*_test.py` / `test_*.py` files under src/)."""

from __future__ import annotations

import ast
import configparser
import itertools
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat.adopt.guess import TEST_FOLDERS, suite_command
from compat.adopt.writes import read_bytes

#: what runs a test suite, as a command's first words
RUNNERS = (("pytest",), ("python", "-m", "pytest"), ("python", "-m", "unittest"))
#: at most this many entries of the test folders are looked at: a tree that large is no
#: test suite, and a link or a huge folder would keep init walking for minutes
WALK_LIMIT = 20_000
#: at most this many CI workflows are read for test commands
WORKFLOWS = 100
#: pytest options that need a plugin: the distribution the cells must install
PLUGIN_OPTIONS = {
    "--cov": "pytest-cov",
    "-n": "pytest-xdist",
    "--numprocesses": "pytest-xdist",
    "--timeout": "pytest-timeout",
    "--benchmark": "pytest-benchmark",
}


@dataclass(frozen=True)
class TestCommand:
    """One command that runs (part of) the suite, and where it was read."""

    command: str
    source: str  # "noxfile.py session tests", "tox.ini", ".github/workflows/ci.yml", …

    def plugins(self) -> list[str]:
        """The pytest plugins its options need."""
        words = shlex.split(self.command)
        found = {d for o, d in PLUGIN_OPTIONS.items() for w in words if w.split("=")[0] == o}
        return sorted(found)


def _runner_words(words: list[str]) -> list[str] | None:
    """`words` from the runner on (`python -m pytest` spelled `pytest`: the cell's
    installed package is tested, not the source tree first on sys.path), or None."""
    for i in range(len(words)):
        for runner in RUNNERS:
            if words[i : i + len(runner)] == list(runner):
                rest = words[i + len(runner) :]
                head = "pytest" if "pytest" in runner else "python -m unittest"
                return [head, *rest]
    return None


def _cleaned(words: list[str]) -> str | None:
    """A command line without what only the caller fills in (posargs, a `{…}` or `$…`
    placeholder), or None when nothing of a runner is in it."""
    found = _runner_words(words)
    if found is None:
        return None
    kept = [w for w in found if not re.search(r"[{}$]|posargs", w)]
    return shlex.join(kept)


def _noxfile_commands(project: Path) -> list[TestCommand]:
    path = project / "noxfile.py"
    try:
        tree = ast.parse(read_bytes(path) or b"", str(path))
    except (SyntaxError, ValueError):
        return []
    found = []
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        for call in (n for n in ast.walk(function) if isinstance(n, ast.Call)):
            if not (isinstance(call.func, ast.Attribute) and call.func.attr == "run"):
                continue
            words = [a.value for a in call.args if isinstance(a, ast.Constant)]
            text = _cleaned([w for w in words if isinstance(w, str)])
            if text:
                found.append(TestCommand(text, f"noxfile.py session {function.name}"))
    return found


def _tox_commands(project: Path) -> list[TestCommand]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string((read_bytes(project / "tox.ini") or b"").decode("utf-8"))
    except (configparser.Error, UnicodeDecodeError):
        return []
    found = []
    for section in parser.sections():
        for line in parser[section].get("commands", "").splitlines():
            text = _cleaned(_split(line))
            if text:
                found.append(TestCommand(text, f"tox.ini [{section}]"))
    return found


def _run_lines(lines: list[str]) -> list[str]:
    """The shell lines of a workflow's `run:` steps: `run: CMD`, and each line of a
    `run: |` block (the lines indented under it). A step's `name:` is no command."""
    found = []
    block = -1  # block: the indent of the `run: |` being read, or -1
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if block >= 0 and stripped and indent > block:
            found.append(stripped)
            continue
        block = -1
        step = stripped.removeprefix("- ")
        if step.startswith("run:"):
            value = step[len("run:") :].strip()
            if value in ("|", ">", "|-", ">-", "|+", ">+", ""):
                block = indent
            else:
                found.append(value)
    return found


def _workflow_commands(project: Path) -> list[TestCommand]:
    found: list[TestCommand] = []
    folders = (project / ".github", project / ".github" / "workflows")
    if any(f.is_symlink() for f in folders):  # init follows no linked folder
        return found
    for path in sorted(folders[1].glob("*.y*ml"))[:WORKFLOWS]:
        try:
            lines = (read_bytes(path) or b"").decode("utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        for line in _run_lines(lines):  # without the workflow's own `${{ … }}` values
            text = _cleaned(_split(re.sub(r"\$\{\{.*?\}\}", "", line)))
            if text:
                found.append(TestCommand(text, path.relative_to(project).as_posix()))
    return found


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote: not a command we can read
        return []


def _testpaths(pyproject: dict[str, Any]) -> list[TestCommand]:
    options = pyproject.get("tool", {}).get("pytest", {}).get("ini_options", {})
    paths = options.get("testpaths") if isinstance(options, dict) else None
    if isinstance(paths, str):
        paths = paths.split()
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return []
    return [TestCommand(shlex.join(["pytest", "-q", *paths]), "[tool.pytest.ini_options]")]


def declared_commands(project: Path, pyproject: dict[str, Any]) -> list[TestCommand]:
    """The project's own test commands, from its first source that has any (noxfile,
    tox.ini, CI workflows, pytest's testpaths), each once."""
    for commands in (
        _noxfile_commands(project),
        _tox_commands(project),
        _workflow_commands(project),
        _testpaths(pyproject),
    ):
        if commands:
            unique = {c.command: c for c in reversed(commands)}
            return [unique[c] for c in dict.fromkeys(c.command for c in commands)]
    return []


@dataclass
class _Budget:
    """How many more entries of the test folders the walk may look at."""

    left: int
    reached: bool = False  # an entry was left unread

    def spend(self) -> bool:
        """Whether one more entry may be looked at (then it is counted)."""
        self.reached = self.reached or self.left <= 0
        self.left -= 0 if self.reached else 1
        return not self.reached


def _walk(top: Path, wanted: Callable[[str], bool], budget: _Budget) -> list[Path]:
    """The regular files under `top` whose name is wanted: no link followed or kept,
    no FIFO or device kept; each entry looked at spends one of the budget."""
    found = []
    folders = [top]
    while folders:
        if budget.left <= 0:
            budget.reached = True
            break
        try:
            with os.scandir(folders.pop()) as entries:
                listed = sorted(itertools.islice(entries, budget.left + 1), key=lambda e: e.name)
        except OSError:
            continue  # unreadable: no test file init can read
        for entry in listed:
            if not budget.spend():
                break
            if entry.is_dir(follow_symlinks=False):
                folders.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and wanted(entry.name):
                found.append(Path(entry.path))
    return found


def _beside_code(name: str) -> bool:
    return name == "conftest.py" or (
        name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    )


@dataclass(frozen=True)
class Suite:
    """The suite's files, the top folders that hold them (as a command names them:
    tests/ first, then src/ when tests live beside the code) and what init says."""

    files: list[Path]
    folders: list[str]
    said: list[str]


def suite(project: Path) -> Suite:
    """Every file of the suite: the test folder's Python files and, under src/, the
    `*_test.py` and `test_*.py` files and their conftest.py. The walk is bounded: no
    linked folder is followed (a `tests -> /usr` link would be walked for minutes),
    only regular files are kept, and it stops after WALK_LIMIT entries, said."""
    budget = _Budget(WALK_LIMIT)
    files = set()
    folders = []
    said = []
    for name, wanted in [*((n, _python) for n in TEST_FOLDERS), ("src", _beside_code)]:
        top = project / name
        if top.is_symlink():
            said.append(
                f"{name}/ is a symlink to {top.readlink()}: not read, init follows "
                "no link: list what its tests import in `requires` yourself"
            )
            continue
        if not top.is_dir():
            continue
        found = _walk(top, wanted, budget)
        files |= set(found)
        if name != "src" or any(f.name != "conftest.py" for f in found):
            folders.append(name)
    if budget.reached:
        said.append(
            f"read the first {WALK_LIMIT} files and folders of "
            f"{', '.join(f + '/' for f in folders)} only: check the guessed `requires` and `run`"
        )
    return Suite(sorted(files), folders, said)


def _python(name: str) -> bool:
    return name.endswith(".py")


def _name(command: str, taken: set[str]) -> str:
    """A `run` entry's name: the first path the command names (`src`, `tests`), else
    `tests`; numbered when taken."""
    words = [w for w in shlex.split(command)[1:] if not w.startswith("-")]
    paths = [w for w in words if w not in ("-m", "unittest", "discover")]
    base = re.sub(r"[^A-Za-z0-9_-]+", "_", paths[0]).strip("_-") if paths else ""
    base = base if base[:1].isalpha() else "tests"
    name = base
    n = 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


def suite_runs(
    project: Path, declared: list[TestCommand], pytest: bool, folders: list[str]
) -> tuple[list[str], list[str]]:
    """The `run` entries for the suite and, for each, where it was read: the project's
    own commands when it has any, else one per folder that holds tests."""
    taken: set[str] = set()
    if declared:
        runs = [f"{_name(c.command, taken)}={c.command}" for c in declared]
        return runs, [f"from {c.source}" for c in declared]
    runs = [suite_command(project, project / f, pytest) for f in folders]
    return runs, ["no test command found in noxfile.py, tox.ini or CI: guessed"] * len(runs)
