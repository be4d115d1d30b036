"""What a project's tests need, read from its test folder: the third-party packages its
test files import (the guess `init` writes as `requires`, printed for review), whether
the folder is a pytest suite, and the command that runs it."""

from __future__ import annotations

import ast
import importlib.metadata
import sys
from collections.abc import Mapping
from pathlib import Path

from packaging.utils import canonicalize_name

from compat.adopt.writes import read_bytes

#: where a project keeps its tests, in the order they are looked for
TEST_FOLDERS = ("tests", "test")

#: what every cell has already, one version per cell: the axes and what they bring
CELL_PACKAGES = {"onnx", "onnxruntime", "numpy", "google", "protobuf"}

#: import names whose distribution is named otherwise (the running environment's
#: own packages_distributions() answers for what is installed here)
DISTRIBUTIONS = {
    "PIL": "pillow",
    "attr": "attrs",
    "bs4": "beautifulsoup4",
    "cv2": "opencv-python",
    "dateutil": "python-dateutil",
    "google": "protobuf",
    "jwt": "pyjwt",
    "pkg_resources": "setuptools",
    "serial": "pyserial",
    "skimage": "scikit-image",
    "sklearn": "scikit-learn",
    "yaml": "pyyaml",
    "_pytest": "pytest",
}


def _optional(node: ast.Try) -> bool:
    """A `try: import x / except ImportError:` block: x is optional."""
    names = set()
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names |= {k.id for k in kinds if isinstance(k, ast.Name)}
    return bool(names & {"ImportError", "ModuleNotFoundError", "Exception"})


def _imports(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Try) and _optional(node):
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        else:
            found |= _imports(node)
    return found


def imported_modules(files: list[Path]) -> set[str]:
    """The top-level names the files import, wherever in the file, except in a `try`
    that catches ImportError (optional) and relative imports."""
    found: set[str] = set()
    for path in files:
        data = read_bytes(path)  # None: no regular file (a FIFO would block), or too large
        try:
            found |= _imports(ast.parse(data, str(path))) if data is not None else set()
        except (SyntaxError, ValueError, RecursionError):
            continue  # a file the tests never import as is (a template, a fixture)
    return found


def local_modules(project: Path, files: list[Path]) -> set[str]:
    """Names importable from the project itself: its packages and modules at the top,
    under src/, and beside the test files (conftest helpers, the package they test)."""
    names = set()
    roots = {project, project / "src", *(f.parent for f in files)}
    for folder in {f.parent for f in files}:  # and every folder up to the project
        roots |= {p for p in folder.parents if p.is_relative_to(project)}
    for root in roots:
        if not root.is_dir():
            continue
        for child in root.iterdir():
            if child.suffix == ".py":
                names.add(child.stem)
            elif child.is_dir() and (child / "__init__.py").is_file():
                names.add(child.name)
    return names


def looks_like_pytest(files: list[Path], imports: set[str], pyproject: dict[str, object]) -> bool:
    """pytest runs it: a conftest.py, a pytest import, pytest's configuration, or test
    functions outside unittest.TestCase classes."""
    if "pytest" in imports or any(f.name == "conftest.py" for f in files):
        return True
    tool = pyproject.get("tool", {})
    if isinstance(tool, dict) and "pytest" in tool:
        return True
    if any((f.parent / "pytest.ini").is_file() for f in files):
        return True
    # plain `def test_…` functions, no unittest: only pytest collects those
    return "unittest" not in imports


def distribution_of(module: str, installed: Mapping[str, list[str]]) -> str:
    """The distribution an import name most likely comes from."""
    if module in DISTRIBUTIONS:
        return DISTRIBUTIONS[module]
    dists = installed.get(module, [])
    return dists[0] if len(dists) == 1 else module


def guess_requires(modules: set[str], local: set[str], own: str) -> list[str]:
    """The distributions behind the third-party imports among `modules`: not the
    standard library, not the project (`own`, its distribution name, and `local`), not
    what every cell has already (onnx, onnxruntime, numpy, protobuf)."""
    installed = importlib.metadata.packages_distributions()
    wanted = set()
    for module in modules:
        if module in sys.stdlib_module_names or module in local or module == "__future__":
            continue
        if module in CELL_PACKAGES:
            continue
        dist = distribution_of(module, installed)
        if canonicalize_name(dist) in {canonicalize_name(own), *CELL_PACKAGES}:
            continue
        wanted.add(dist)
    return sorted(wanted, key=str.lower)


def suite_command(project: Path, folder: Path, pytest: bool) -> str:
    """The `run` entry that runs the suite from the project root: `pytest`, not `python -m
    pytest`, which would put the project root first on sys.path and test the source tree
    instead of the package the cell installed."""
    where = folder.relative_to(project).as_posix()
    if pytest:
        return f"{where}=pytest -q {where}"
    return f"{where}=python -m unittest discover -q -s {where}"
