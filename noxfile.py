"""Sessions: `matrix` runs the compatibility matrix, `tests` and `lint` check this repo.

The noxfile only maps sessions to commands; which releases a run covers is
decided in one place, `[tool.compat]` in pyproject.toml.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import nox
from nox.command import CommandFailed

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests"]

PYTHON = "3.11"
#: pytest on every core, a test file to a worker: a module's fixtures (a real project
#: adopted, plain venvs of exporters' models) are made once
PARALLEL = ("-n", "auto", "--dist", "loadfile")
PYPROJECT = Path(__file__).with_name("pyproject.toml")


def install_project(session: nox.Session, extras: str = "") -> None:
    """`pip install -e .[extras]`, skipped while pyproject.toml and the extras are the
    ones installed last time: the install is editable, code changes need none, and a
    no-change `nox -s matrix` should not spend seconds reinstalling."""
    want = hashlib.sha256(PYPROJECT.read_bytes() + extras.encode()).hexdigest()
    stamp = Path(session.virtualenv.location) / ".onnx-compat-installed"
    if stamp.exists() and stamp.read_text() == want:
        return
    # uv leaves bytecode to the first import, which never writes it under
    # PYTHONDONTWRITEBYTECODE (CI images set it): every run would compile numpy and
    # onnx again (0.3 s). pip compiles at install by default.
    compile_now = ["--compile-bytecode"] if session.venv_backend == "uv" else []
    session.install(*compile_now, "-e", f".{extras}")
    stamp.write_text(want)


def run_compat(session: nox.Session, *args: str) -> None:
    """Installs this project and runs `python -m compat ARGS`, keeping its exit code 2
    (bad usage), which nox would otherwise turn into 1."""
    install_project(session)
    try:
        session.run("python", "-m", "compat", *args)
    except CommandFailed as failed:
        code = re.search(r"code (\d+)", str(failed.reason))
        if code and code.group(1) == "2":
            sys.exit(2)
        raise


@nox.session(python=PYTHON)
def matrix(session: nox.Session) -> None:
    """Run the case corpus in one pinned environment per release: `nox -s matrix -- --help`."""
    run_compat(session, "matrix", *session.posargs)


@nox.session(python=PYTHON)
def scoreboard(session: nox.Session) -> None:
    """ONNX's backend node tests on every onnxruntime release -> reports/scoreboard/."""
    run_compat(session, "scoreboard", *session.posargs)


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """Re-render the reports from stored results, no run; `-- --check` fails on drift."""
    run_compat(session, "report", *session.posargs)


@nox.session(python=PYTHON)
def repro(session: nox.Session) -> None:
    """Rebuild one cell under exact pins: `nox -s repro -- onnx==1.18.0 [--requirements F]`."""
    run_compat(session, "repro", *session.posargs)


@nox.session(python=PYTHON)
def bisect(session: nox.Session) -> None:
    """First release where an outcome changes: `nox -s bisect -- --case C --check K --package P`."""
    run_compat(session, "bisect", *session.posargs)


@nox.session(python=PYTHON)
def triage(session: nox.Session) -> None:
    """A failing model to an upstream report: `nox -s triage -- MODEL.onnx [--inputs NPZ]`."""
    run_compat(session, "triage", *session.posargs)


@nox.session(python=PYTHON)
def scan(session: nox.Session) -> None:
    """Known incompatibilities a model carries, no environment: `nox -s scan -- MODEL.onnx`."""
    run_compat(session, "scan", *session.posargs)


@nox.session(python=PYTHON)
def merge(session: nox.Session) -> None:
    """Combine shard reports: `nox -s merge -- shard1/ shard2/ [--out reports]`."""
    run_compat(session, "merge", *session.posargs)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the test suite (a few real environments included): `nox -s tests -- -k NAME`."""
    install_project(session, "[test,docs]")  # docs: the site's build and browser tests
    session.run("pytest", *PARALLEL, *session.posargs)


@nox.session(python=PYTHON)
def quick(session: nox.Session) -> None:
    """The edit loop's tier: every test that builds no environment and drives no browser
    (about a minute); `.ci/run` runs them all (`nox -s tests`)."""
    install_project(session, "[test]")
    session.run("pytest", *PARALLEL, "-m", "not envs and not browser", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the documentation site into site/, strictly: a warning or a broken link fails."""
    install_project(session, "[docs]")
    # Material's banner about MkDocs 2 is not about this build: kept out of the log
    session.run("mkdocs", "build", "--strict", *session.posargs, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint and format) and mypy on the host code."""
    session.install("-e", ".[lint,test]", "nox")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Rerun a figure of the Speed page: `nox -s bench -- NAME [ARGS]` runs bench/NAME.py
    with this project, nox and virtualenv installed; no NAME lists the benches."""
    import ast

    benches = {
        path.stem: (ast.get_docstring(ast.parse(text)) or "").splitlines()[0]
        for path in sorted(Path(__file__).with_name("bench").glob("*.py"))
        if 'if __name__ == "__main__":' in (text := path.read_text())
    }
    name, *args = session.posargs or [""]
    if name not in benches:
        width = max(map(len, benches))
        for bench_name, summary in benches.items():
            print(f"  {bench_name:<{width}}  {summary}")
        said = f"unknown bench {name!r}" if name else "no bench named"
        print(
            f"nox -s bench: {said}; usage: nox -s bench -- NAME [ARGS], NAME one of the "
            "above (bench/NAME.py)",
            file=sys.stderr,
        )
        sys.exit(2)
    install_project(session, "[bench]")
    session.run("python", f"bench/{name}.py", *args)
