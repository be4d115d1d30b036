"""Known failures as data (xfail/xpass), and tables read as words."""

from __future__ import annotations

import pytest

from compat.core.case import KnownFailure
from compat.core.install import InstallRequest
from compat.core.outcomes import CheckResult, Outcome
from compat.corpus.known import classify
from compat.plan.matrix import Cell
from compat.render.grid import summarize
from tests.helpers import add_one_case

BUG = KnownFailure("onnx", ">=1.18,<1.21", ("shape_inference",), "pads rejected", "https://x/1")
CASE = add_one_case(known=(BUG,))


def result(outcome: Outcome, check: str = "shape_inference") -> CheckResult:
    return CheckResult("cell", CASE.id, check, outcome, detail="InferenceError: ...")


def cell(onnx: str, ort: str = "1.24.4") -> Cell:
    return Cell(onnx, ort, InstallRequest())


@pytest.mark.parametrize(
    ("outcome", "onnx", "expected"),
    [
        (Outcome.FAIL, "1.18.0", Outcome.XFAIL),
        (Outcome.ERROR, "1.20.1", Outcome.XFAIL),
        (Outcome.PASS, "1.19.1", Outcome.XPASS),
        (Outcome.FAIL, "1.21.0", Outcome.FAIL),  # outside the range: a real regression
        (Outcome.PASS, "1.17.0", Outcome.PASS),
        (Outcome.CRASH, "1.18.0", Outcome.CRASH),  # a new symptom is never absorbed
        (Outcome.SKIP, "1.18.0", Outcome.SKIP),
    ],
)
def test_a_known_failure_classifies_only_inside_its_range(
    outcome: Outcome, onnx: str, expected: Outcome
) -> None:
    assert classify(result(outcome), CASE, cell(onnx)).outcome is expected


def test_xfail_keeps_the_reason_and_links_upstream() -> None:
    got = classify(result(Outcome.FAIL), CASE, cell("1.18.0"))
    assert got.known == "https://x/1"
    assert got.detail == "InferenceError: ..."


def test_xpass_says_the_bug_looks_fixed() -> None:
    got = classify(result(Outcome.PASS), CASE, cell("1.19.1"))
    assert "looks fixed" in got.detail and "https://x/1" in got.detail


def test_a_known_failure_covers_only_its_checks_and_package() -> None:
    assert classify(result(Outcome.FAIL, "checker"), CASE, cell("1.18.0")).outcome is Outcome.FAIL
    ort_bug = add_one_case(known=(KnownFailure("onnxruntime", "", ("ort_run",), "r", "l"),))
    got = classify(result(Outcome.FAIL, "ort_run"), ort_bug, cell("1.18.0", "1.32.0"))
    assert got.outcome is Outcome.XFAIL  # "" is every release


LABELS = ("1.18.0", "1.19.1", "1.20.1", "1.21.0", "1.23.2")


@pytest.mark.parametrize(
    ("entries", "words"),
    [
        (("pass",) * 5, "passes on all"),
        (("xfail",) * 3 + ("pass",) * 2, "fails (known) ≤ 1.20.1, passes ≥ 1.21.0"),
        (
            ("pass", "fail", "fail", "pass", "pass"),
            "passes 1.18.0; fails 1.19.1–1.20.1; passes 1.21.0–1.23.2",
        ),
        (("install-error",) + ("pass",) * 4, "cannot install ≤ 1.18.0, passes ≥ 1.19.1"),
    ],
)
def test_a_row_reads_as_words(entries: tuple[str, ...], words: str) -> None:
    assert summarize(LABELS, entries) == words
