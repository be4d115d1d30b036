"""The user's project as the cells install it (compat/execute/project.py): its wheel's
dependencies per extra, its dependency groups, what its build reads, and real builds
with its own backend (a dynamic version in a plain folder, a project that cannot build)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from compat.core.errors import UsageError
from compat.execute.project import (
    BuildError,
    Built,
    build,
    group_requirements,
    source_digest,
)


def built(*requires: tuple[str, str]) -> Built:
    return Built(Path("/p"), "My_Pkg", "1.0", Path("/p/x.whl"), "0" * 64, requires)


def test_a_wheel_s_dependencies_per_extra_follow_the_project_s_own_extras() -> None:
    wheel = built(
        ("onnx>=1.13", ""),
        ("numpy", 'python_version < "3.12"'),
        ("pytest>=8", 'extra == "test"'),
        ("ml-dtypes", 'python_version >= "3.9" and extra == "test"'),
        ("my-pkg[plot]", 'extra == "test"'),  # the project naming its own extra
        ("matplotlib", 'extra == "plot"'),
        ("sphinx", 'extra == "docs"'),
        ("tomli", 'extra == "test" or python_version < "3.10"'),  # base below 3.10 too
    )
    assert wheel.requirements() == (
        "onnx>=1.13",
        'numpy; python_version < "3.12"',
        'tomli; python_version < "3.10"',
    )
    assert wheel.requirements(("test",)) == (
        "onnx>=1.13",
        'numpy; python_version < "3.12"',
        'tomli; python_version < "3.10"',
        "pytest>=8",
        'ml-dtypes; python_version >= "3.9"',
        "tomli",
        "matplotlib",
    )


def test_dependency_groups_are_read_with_their_includes_and_an_unknown_one_is_named(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[dependency-groups]\ntest = ["pytest>=8", {include-group = "typing"}]\n'
        'typing = ["mypy"]\ndocs = ["sphinx"]\n'
    )
    assert group_requirements(tmp_path, ("test",), "cfg") == ("pytest>=8", "mypy")
    assert group_requirements(tmp_path, ("Typing", "docs"), "cfg") == ("mypy", "sphinx")
    assert group_requirements(tmp_path, (), "cfg") == ()
    with pytest.raises(UsageError, match=r"groups: 'tests' is not in .* \(it has: docs, test"):
        group_requirements(tmp_path, ("tests",), "cfg")


def test_what_a_build_reads_leaves_out_reports_state_and_caches(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("A = 1\n")
    first = source_digest(tmp_path)
    for folder in ("reports", ".compat", ".nox", "build", "__pycache__"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "f.txt").write_text("x")
    assert source_digest(tmp_path) == first
    (tmp_path / "src" / "m.py").write_text("A = 2\n")
    assert source_digest(tmp_path) != first


SCM_PROJECT = """\
[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "scmpkg"
dynamic = ["version"]

[tool.setuptools]
py-modules = ["scmpkg"]

[tool.setuptools_scm]
"""


@pytest.mark.envs
@pytest.mark.subprocess
def test_a_vcs_version_in_a_plain_folder_builds_as_0_unknown_and_a_broken_build_is_one_line(
    tmp_path: Path,
) -> None:
    project = tmp_path / "scmpkg"
    project.mkdir()
    (project / "pyproject.toml").write_text(SCM_PROJECT)
    (project / "scmpkg.py").write_text("A = 1\n")
    said: list[str] = []
    wheel = build(project, tmp_path / "state", sys.executable, said.append)
    assert (wheel.name, wheel.version) == ("scmpkg", "0+unknown")
    assert wheel.wheel.is_file() and said[0].startswith("building ")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text(  # setuptools refuses it, in its own words
        SCM_PROJECT.replace('name = "scmpkg"', 'name = "b"\ndependencies = ["not pep 508!"]')
    )
    with pytest.raises(BuildError) as caught:
        build(broken, tmp_path / "state", sys.executable, said.append)
    message = str(caught.value)
    assert message.startswith(f"{broken}: cannot build the project with its own build backend")
    assert "\n" not in message and message.endswith("shows all it printed)")
    assert "must be pep508" in message  # the backend's own words, not only uv's wrapper
