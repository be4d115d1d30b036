"""Sessions: `matrix` runs the compatibility matrix, `tests` and `lint` check this repo.

The noxfile only maps sessions to commands; which releases a run covers is
decided in one place, `[tool.compat]` in pyproject.toml.
"""

from __future__ import annotations

import nox

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests"]

PYTHON = "3.11"


@nox.session(python=PYTHON)
def matrix(session: nox.Session) -> None:
    """Run the case corpus in one pinned environment per release: `nox -s matrix -- --help`."""
    session.install("-e", ".")
    session.run("python", "-m", "compat", "matrix", *session.posargs)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the test suite (a few real environments included): `nox -s tests -- -k NAME`."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint and format) and mypy on the host code."""
    session.install("-e", ".[lint,test]", "nox")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")
