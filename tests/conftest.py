"""Unit tests never spawn processes by accident (cf. cibuildwheel's unit_test/conftest.py).

Tests that run real child processes are marked `subprocess`; tests that build real
onnx/onnxruntime environments with uv are marked `envs`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: fixtures, not this project's tests: tests/data/linted_project has a suite of its own
collect_ignore = ["data"]


@pytest.fixture(autouse=True)
def _no_accidental_processes(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if any(request.node.get_closest_marker(m) for m in ("subprocess", "envs", "browser")):
        return

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(
            f"unit test {request.node.nodeid} tried to start a process {args[:1]}: "
            "mark it @pytest.mark.subprocess if that is intended"
        )

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


@pytest.fixture(scope="session")
def shared_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One state directory (environments, cache) for the real-environment tests that
    only need cells to exist, so each release is installed once per test session (once
    per pytest-xdist worker: tests here give one cell other requirements than another,
    and an environment rebuilt for one test must not change under a test running in the
    other worker)."""
    return tmp_path_factory.mktemp("state")
