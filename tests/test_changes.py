"""compat/core/changes.py: two reports matched by case, check and the versions the check
exercises, and the comparison carried through matrix.json (the real runs are in
tests/test_baseline.py)."""

from __future__ import annotations

from pathlib import Path

from compat.core.changes import Kind, Source, attach, changes_of, compare
from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.core.report import CaseInfo, Report, read_json, write_json

CHECKS = {"checker": "onnx", "ort_run": "onnxruntime", "both_check": "both"}
SOURCE = Source("git:v1.4.0", "v1.4.0", "commit abc")


def cell(onnx: str, ort: str, *pins: str) -> CellRecord:
    requirements = [f"onnx=={onnx}", f"onnxruntime=={ort}", "numpy", *pins]
    fields = {"id": f"onnx{onnx}-ort{ort}", "onnx": onnx, "onnxruntime": ort, "state": "ready"}
    return CellRecord.from_dict({**fields, "requirements": requirements})


def report(cells: list[CellRecord], outcomes: dict[tuple[str, str], tuple[Outcome, str]]) -> Report:
    """Every check of case `c` in every cell; (cell, check) -> outcome and detail."""
    results = tuple(
        CheckResult(c.id, "c", check, *outcomes.get((c.id, check), (Outcome.PASS, "")))
        for c in cells
        for check in CHECKS
    )
    axes = {
        "onnx": tuple(c.id for c in cells if c.onnxruntime == cells[0].onnxruntime),
        "onnxruntime": tuple(c.id for c in cells if c.onnx == cells[0].onnx),
    }
    return Report(tuple(cells), (CaseInfo("c", "f", "", "00", CHECKS),), results, axes)


A, B = cell("1.18.0", "1.24.4"), cell("1.18.0", "1.25.0")


def test_a_message_that_differs_is_one_change_with_both() -> None:
    before = report([A], {(A.id, "checker"): (Outcome.FAIL, "one")})
    after = report([A], {(A.id, "checker"): (Outcome.FAIL, "two")})
    changes = compare(before, after, SOURCE)
    assert [(c.kind, c.before, c.after) for c in changes.changes] == [
        (Kind.CHANGED, "fail: one", "fail: two")
    ]
    assert changes.gated == []  # unexpected on both sides: not new
    assert changes.line() == "since v1.4.0: 0 new failures, 0 fixed, 1 changed"


def test_an_address_a_temporary_path_or_a_duration_is_no_change() -> None:
    said = [
        ("<Node at 0x7f3a2c1d9e80> failed in 2.31s", "<Node at 0x7f11aa00bc40> failed in 1.9s"),
        ("no such file /tmp/pytest-of-ci/pytest-3/x.onnx", "no such file /tmp/tmpq8z1/x.onnx"),
        ("ran past the 30 s timeout", "ran past the 45 s timeout"),
    ]
    for one, two in said:
        before = report([A], {(A.id, "checker"): (Outcome.FAIL, one)})
        after = report([A], {(A.id, "checker"): (Outcome.FAIL, two)})
        assert compare(before, after, SOURCE).changes == (), (one, two)
    # the words around them still count
    before = report([A], {(A.id, "checker"): (Outcome.FAIL, "3 values differ in 2.0s")})
    after = report([A], {(A.id, "checker"): (Outcome.FAIL, "4 values differ in 2.0s")})
    assert [c.kind for c in compare(before, after, SOURCE).changes] == [Kind.CHANGED]


def test_a_failing_suite_is_compared_by_its_failing_tests() -> None:
    def suite(*failing: str, passed: int = 1) -> Report:
        result = CheckResult(
            A.id,
            "c",
            "checker",
            Outcome.FAIL,
            f"{len(failing)} failed, {passed} passed",
            failing=failing,
        )
        return Report((A,), (CaseInfo("c", "f", "", "00", CHECKS),), (result,), {"onnx": (A.id,)})

    same = compare(suite("t::a"), suite("t::a", passed=2), SOURCE)
    assert same.changes == ()  # a passing test more moved only the counts
    more = compare(suite("t::a"), suite("t::a", "t::b"), SOURCE)
    assert [(c.kind, c.after) for c in more.changes] == [
        (Kind.NEW_FAILURE, "newly failing: t::b; fail: 2 failed, 1 passed")
    ]
    assert more.gated == list(more.changes)
    fewer = compare(suite("t::a", "t::b"), suite("t::b"), SOURCE)
    assert [(c.kind, c.after) for c in fewer.changes] == [
        (Kind.FIXED, "no longer failing: t::a; fail: 1 failed, 1 passed")
    ]
    many = compare(suite("t::a"), suite("t::a", *(f"t::n{i}" for i in range(7))), SOURCE)
    assert many.changes[0].after.startswith(
        "newly failing: t::n0, t::n1, t::n2, t::n3, t::n4 (+2 more)"
    )
    # a run whose runner named no test (it crashed in collection): by its message
    crashed = compare(suite(), suite("t::a"), SOURCE)
    assert [c.kind for c in crashed.changes] == [Kind.CHANGED]


def test_new_failures_and_fixes_are_told_apart_and_only_the_new_ones_gate() -> None:
    before = report([A], {(A.id, "checker"): (Outcome.FAIL, "old")})
    after = report([A], {(A.id, "ort_run"): (Outcome.ERROR, "new")})
    changes = compare(before, after, SOURCE)
    assert [(c.kind, c.check) for c in changes.changes] == [
        (Kind.NEW_FAILURE, "ort_run"),
        (Kind.FIXED, "checker"),
    ]
    assert [c.check for c in changes.gated] == ["ort_run"]


def test_a_release_added_to_an_axis_is_a_new_release_not_changes() -> None:
    before = report([A], {})
    after = report([A, B], {(B.id, "ort_run"): (Outcome.FAIL, "boom")})
    changes = compare(before, after, SOURCE)
    assert changes.new_releases == ("onnxruntime 1.25.0",)
    # the onnx check on the new cell is the result the baseline has: no change at all
    assert [(c.kind, c.check, c.release) for c in changes.changes] == [
        (Kind.NEW, "ort_run", "onnxruntime 1.25.0")
    ]
    assert changes.new_results == 2  # ort_run and both_check on onnxruntime 1.25.0
    assert [c.check for c in changes.gated] == ["ort_run"]  # a new release's failure gates
    assert changes.line() == (
        "since v1.4.0: 0 new failures, 0 fixed, 0 changed, 1 new release (1 unexpected there)"
    )
    gone = compare(after, before, SOURCE)
    assert gone.gone_releases == ("onnxruntime 1.25.0",)
    assert [c.kind for c in gone.changes] == [Kind.GONE]


def test_an_extra_pin_is_part_of_what_a_result_exercises() -> None:
    pinned = cell("1.18.0", "1.24.4", "protobuf==5.29.5")
    changes = compare(report([A], {}), report([pinned], {}), SOURCE)
    assert changes.new_results == 3 and changes.gone_results == 3


def test_a_broken_cell_is_a_result_of_its_own() -> None:
    broken = CellRecord(A.id, A.onnx, A.onnxruntime, CellState.INSTALL_ERROR, detail="no")
    after = Report((broken,), report([A], {}).cases, (), {"onnx": (A.id,)})
    changes = compare(report([A], {}), after, SOURCE)
    (change,) = [c for c in changes.changes if c.case == ""]
    assert change.after == "install-error: no"


def test_the_comparison_survives_matrix_json(tmp_path: Path) -> None:
    before = report([A], {(A.id, "checker"): (Outcome.FAIL, "one")})
    after = report([A, B], {(A.id, "checker"): (Outcome.FAIL, "two")})
    carried = attach(after, compare(before, after, SOURCE))
    write_json(carried, tmp_path / "matrix.json.gz")
    back = changes_of(read_json(tmp_path / "matrix.json.gz"))
    assert back == compare(before, after, SOURCE)
    assert changes_of(after) is None
