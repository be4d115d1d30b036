"""Where a project's tests are and how the project itself runs them, read from what it
has: its noxfile's and tox.ini's test commands, its CI workflows' pytest and unittest
lines, `[tool.pytest.ini_options] testpaths`, then the folders tests live in (tests/,
test/, and `*_test.py` / `test_*.py` files under src/)."""

from __future__ import annotations

import ast
import configparser
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat.adopt.guess import TEST_FOLDERS, suite_command

#: what runs a test suite, as a command's first words
RUNNERS = (("pytest",), ("python", "-m", "pytest"), ("python", "-m", "unittest"))
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
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError):
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
        parser.read(project / "tox.ini", encoding="utf-8")
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
    found, block = [], -1  # block: the indent of the `run: |` being read, or -1
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
    found = []
    for path in sorted((project / ".github" / "workflows").glob("*.y*ml")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
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


def suite_files(project: Path) -> list[Path]:
    """Every file of the suite: the test folder's Python files and, under src/, the
    `*_test.py` and `test_*.py` files and their conftest.py."""
    files: set[Path] = set()
    for name in TEST_FOLDERS:
        if (project / name).is_dir():
            files |= set((project / name).rglob("*.py"))
    src = project / "src"
    if src.is_dir():
        for pattern in ("*_test.py", "test_*.py", "conftest.py"):
            files |= set(src.rglob(pattern))
    return sorted(p for p in files if p.is_file())


def source_test_folders(project: Path) -> list[str]:
    """The top folders under the project that hold test files, as a command names them
    (tests/ first, then src/ when tests live beside the code)."""
    found = [n for n in TEST_FOLDERS if (project / n).is_dir()]
    src = project / "src"
    if src.is_dir() and (any(src.rglob("*_test.py")) or any(src.rglob("test_*.py"))):
        found.append("src")
    return found


def _name(command: str, taken: set[str]) -> str:
    """A `run` entry's name: the first path the command names (`src`, `tests`), else
    `tests`; numbered when taken."""
    words = [w for w in shlex.split(command)[1:] if not w.startswith("-")]
    paths = [w for w in words if w not in ("-m", "unittest", "discover")]
    base = re.sub(r"[^A-Za-z0-9_-]+", "_", paths[0]).strip("_-") if paths else ""
    base = base if base[:1].isalpha() else "tests"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


def suite_runs(
    project: Path, declared: list[TestCommand], pytest: bool
) -> tuple[list[str], list[str]]:
    """The `run` entries for the suite and, for each, where it was read: the project's
    own commands when it has any, else one per folder that holds tests."""
    taken: set[str] = set()
    if declared:
        runs = [f"{_name(c.command, taken)}={c.command}" for c in declared]
        return runs, [f"from {c.source}" for c in declared]
    folders = source_test_folders(project)
    runs = [suite_command(project, project / f, pytest) for f in folders]
    return runs, ["no test command found in noxfile.py, tox.ini or CI: guessed"] * len(runs)
