"""compat/adopt/declared.py: what a project declares, and "claims vs reality"."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.adopt.declared import (
    claims_line,
    declared_ranges,
    declared_test_sets,
    read_pyproject,
    set_requirements,
)
from compat.core.errors import UsageError
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import CaseInfo, Report

PYPROJECT = """\
[project]
name = "mine"
dependencies = [
  "onnx>=1.13",
  "numpy",
  "ONNXRuntime>=1.17; python_version >= '3.8'",
  "onnxruntime<2; python_version >= '3.8'",
  "protobuf<3; python_version < '3'",
]
[project.optional-dependencies]
torch = ["torch>=2", "onnx<99"]
test = ["pytest>=8", "hypothesis"]
[dependency-groups]
lint = ["ruff"]
dev = [{include-group = "lint"}, "pytest", "ml_dtypes>=0.5"]
"""


def _project(tmp_path: Path, text: str = PYPROJECT) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    return path


def test_declared_ranges_read_dependencies_then_extras(tmp_path: Path) -> None:
    ranges = declared_ranges(_project(tmp_path))
    assert ranges["onnx"] == ">=1.13"  # dependencies win over an extra's onnx<99
    assert ranges["numpy"] == ""  # declared without a range
    assert ranges["onnxruntime"] == "<2,>=1.17"  # both entries, names normalised
    assert "protobuf" not in ranges  # its marker does not hold here
    assert ranges["torch"] == ">=2"
    assert declared_ranges(tmp_path / "none.toml") == {}


def test_a_test_group_wins_over_a_test_extra_and_includes_are_followed(tmp_path: Path) -> None:
    pyproject = read_pyproject(_project(tmp_path))
    assert declared_test_sets(pyproject) == (["dev"], [])
    assert set_requirements(pyproject, ["dev"], []) == {"ruff", "pytest", "ml-dtypes"}
    without_groups = read_pyproject(_project(tmp_path, PYPROJECT.split("[dependency-groups]")[0]))
    assert declared_test_sets(without_groups) == ([], ["test"])
    assert set_requirements(without_groups, [], ["test"]) == {"pytest", "hypothesis"}


def test_group_names_are_normalised_and_a_cycle_is_one_line(tmp_path: Path) -> None:
    pyproject = read_pyproject(_project(tmp_path, '[dependency-groups]\nTests = ["pytest"]\n'))
    assert declared_test_sets(pyproject) == (["Tests"], [])
    assert set_requirements(pyproject, ["Tests"], []) == {"pytest"}
    cyclic = {
        "dependency-groups": {
            "test": [{"include-group": "lint"}],
            "lint": [{"include-group": "test"}],
        }
    }
    with pytest.raises(UsageError, match=r"^pyproject.toml: \[dependency-groups\] group 'test' "):
        set_requirements(cyclic, ["test"], [])


ONNX = ["1.14.1", "1.16.2", "1.17.0", "1.18.0", "1.19.1", "1.20.1"]


def _outcomes(failing: set[str], versions: list[str] = ONNX) -> list[tuple[str, str, bool]]:
    return [("onnx", v, v not in failing) for v in versions]


@pytest.mark.parametrize(
    ("failing", "line"),
    [
        (
            {"1.16.2", "1.17.0", "1.18.0"},
            "pyproject says onnx>=1.13; your tests fail on 1.16.2–1.18.0 "
            "(passing up to 1.14.1 and from 1.19.1)",
        ),
        (
            {"1.14.1", "1.16.2"},
            "pyproject says onnx>=1.13; your tests fail on 1.14.1–1.16.2 (passing from 1.17.0)",
        ),
        (
            {"1.19.1", "1.20.1"},
            "pyproject says onnx>=1.13; your tests fail on 1.19.1–1.20.1 (passing up to 1.18.0)",
        ),
        (
            {"1.17.0"},
            "pyproject says onnx>=1.13; your tests fail on 1.17.0 "
            "(passing up to 1.16.2 and from 1.18.0)",
        ),
        (
            {"1.14.1", "1.17.0", "1.18.0", "1.20.1"},
            "pyproject says onnx>=1.13; your tests fail on 1.14.1, 1.17.0–1.18.0 and 1.20.1 "
            "(passing on the other 2 tested)",
        ),
        (
            set(),
            "pyproject says onnx>=1.13; your tests pass on every release tested (1.14.1–1.20.1)",
        ),
        (
            set(ONNX),
            "pyproject says onnx>=1.13; your tests fail on every release tested (1.14.1–1.20.1)",
        ),
    ],
)
def test_claims_line_words_each_shape_of_failure(failing: set[str], line: str) -> None:
    assert claims_line({"onnx": ">=1.13"}, _outcomes(failing)) == line


def test_claims_line_weighs_only_releases_inside_the_declared_range() -> None:
    outcomes = _outcomes({"1.14.1", "1.16.2"})  # both below the declared range
    assert claims_line({"onnx": ">=1.17"}, outcomes) == (
        "pyproject says onnx>=1.17; your tests pass on every release tested (1.17.0–1.20.1)"
    )
    assert claims_line({"onnx": ">=1.21"}, outcomes) is None  # nothing tested in range
    assert claims_line({"numpy": ">=1"}, outcomes) is None  # onnx declares nothing
    assert claims_line({"onnx": ""}, _outcomes({"1.20.1"}), what="its checks") == (
        "pyproject says any onnx; its checks fail on 1.20.1 (passing up to 1.19.1)"
    )


def test_claims_line_orders_releases_and_a_release_failing_once_fails() -> None:
    outcomes = [
        ("onnxruntime", "1.20.1", True),
        ("onnxruntime", "1.9.0", True),
        ("onnxruntime", "1.32.0", False),
        ("onnxruntime", "1.20.1", False),  # the same release in another cell
        ("onnx", "1.18.0", True),
    ]
    assert claims_line({"onnxruntime": ">=1.9", "onnx": ">=1.13"}, outcomes) == (
        "pyproject says onnxruntime>=1.9; your tests fail on 1.20.1–1.32.0 "
        "(passing up to 1.9.0) · pyproject says onnx>=1.13; your tests pass on every "
        "release tested (1.18.0)"
    )


def _command_report(failing: set[str]) -> Report:
    """A project's command on an onnx axis paired with onnxruntime 1.32.0 and an
    onnxruntime axis paired with onnx 1.23.2 (the shared cell on both); `failing`: ids."""
    ids = {
        "onnx": ["onnx1.20.1-ort1.32.0", "onnx1.23.2-ort1.32.0"],
        "onnxruntime": ["onnx1.23.2-ort1.22.1", "onnx1.23.2-ort1.32.0"],
    }
    unique = dict.fromkeys(ids["onnx"] + ids["onnxruntime"])
    cells = tuple(
        CellRecord(i, i.split("-")[0][4:], i.split("-ort")[1], CellState.READY) for i in unique
    )
    case = CaseInfo("command.tests", "command", "tests", "0", {"command": "both"})
    results = tuple(
        CheckResult(i, case.id, "command", Outcome.FAIL if i in failing else Outcome.PASS)
        for i in unique
    )
    return Report(cells, (case,), results, {k: tuple(v) for k, v in ids.items()})


def test_an_axis_whose_partner_fails_the_tests_is_not_judged_and_a_passing_pair_offered(
    tmp_path: Path,
) -> None:
    from compat.workflow.finish import claims

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\ndependencies = ["onnx>=1.13", "onnxruntime"]\n')
    # onnxruntime 1.32.0 breaks the tests: every onnx cell runs with it and fails
    report = _command_report({"onnx1.20.1-ort1.32.0", "onnx1.23.2-ort1.32.0"})
    (line,) = claims(report, pyproject)
    onnx_clause, ort_clause = line.split(" · ")
    assert onnx_clause == (
        "pyproject says onnx>=1.13; not judged: every onnx cell runs with onnxruntime==1.32.0, "
        "which fails your tests on the onnxruntime axis too; pair the onnx axis with one "
        "that passes, like 1.22.1"
    )
    assert ort_clause == (
        "pyproject says any onnxruntime; your tests fail on 1.32.0 (passing up to 1.22.1)"
    )
    # an onnx release that fails with a partner that passes elsewhere on the onnx axis
    # is onnx's: judged as before
    (line,) = claims(_command_report({"onnx1.20.1-ort1.32.0"}), pyproject)
    assert line.startswith("pyproject says onnx>=1.13; your tests fail on 1.20.1")


def test_a_release_whose_cell_is_broken_is_named_untested(tmp_path: Path) -> None:
    """ "Every release tested" leaves out a release whose environment could not be made:
    the claim says which, instead of passing it over."""
    from dataclasses import replace

    from compat.workflow.finish import claims

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\ndependencies = ["onnx>=1.13"]\n')
    report = _command_report(set())
    broken = CellRecord("onnx1.13.1-ort1.32.0", "1.13.1", "1.32.0", CellState.INSTALL_ERROR)
    axes = {**report.axes, "onnx": (broken.id, *report.axes["onnx"])}
    (line,) = claims(replace(report, cells=(*report.cells, broken), axes=axes), pyproject)
    assert line == (
        "pyproject says onnx>=1.13; your tests pass on every release tested (1.20.1–1.23.2) "
        "(not tested: 1.13.1: its environment could not be made)"
    )


def test_a_failure_that_follows_another_package_names_it() -> None:
    from dataclasses import replace

    from compat.workflow.finish import with_packages

    report = _command_report({"onnx1.23.2-ort1.22.1"})
    numpy = {"onnx1.23.2-ort1.22.1": "1.26.4"}  # an old onnxruntime's numpy-1 constraint
    cells = {c.id: replace(c, packages={"numpy": numpy.get(c.id, "2.4.6")}) for c in report.cells}
    results = [r for r in report.results if r.cell in report.axes["onnxruntime"]]
    clause = "pyproject says any onnxruntime; your tests fail on 1.22.1 (passing from 1.32.0)"
    assert with_packages(clause, results, cells) == (
        f"{clause} (the failing cells have numpy 1.26.4, the passing ones 2.4.6)"
    )
    same = {c.id: replace(c, packages={"numpy": "2.4.6"}) for c in report.cells}
    assert with_packages(clause, results, same) == clause  # nothing but the release differs
