"""A check computed in parts reads as one result: the rule that joins the parts."""

from __future__ import annotations

from typing import Any

from compat.cell.parts import combine


def part(outcome: str, detail: str, seconds: float = 0.5, phase: str = "") -> dict[str, Any]:
    return {
        "check": "annotations:x",
        "outcome": outcome,
        "phase": phase,
        "detail": detail,
        "seconds": seconds,
        "traceback": "",
    }


def test_every_part_passing_gives_every_part_s_detail_once() -> None:
    both = combine("annotations", [part("pass", "ort run 1: 2 of 2"), part("pass", "same")])
    assert both["outcome"] == "pass" and both["check"] == "annotations"
    assert both["detail"] == "ort run 1: 2 of 2; same" and both["seconds"] == 1.0
    twice = combine("inferred_annotations", [part("pass", "adds none"), part("pass", "adds none")])
    assert twice["detail"] == "adds none"


def test_a_skipped_part_beside_a_passing_one_is_said_as_not_observed() -> None:
    got = combine(
        "annotations",
        [
            part("skip", "no runtime observed an annotated value: ort: IR 11 > max 10"),
            part("pass", "reference run 1: 3 of 3 annotated values checked"),
        ],
    )
    assert got["outcome"] == "pass"
    assert got["detail"] == (
        "reference run 1: 3 of 3 annotated values checked; not observed by ort: IR 11 > max 10"
    )


def test_every_part_skipped_is_one_skip_with_every_reason() -> None:
    got = combine(
        "annotations",
        [
            part("skip", "no runtime observed an annotated value: ort: IR 11 > max 10"),
            part("skip", "no runtime observed an annotated value: reference: opset 25 > 24"),
        ],
    )
    assert got["outcome"] == "skip"
    assert got["detail"] == (
        "no runtime observed an annotated value: ort: IR 11 > max 10; reference: opset 25 > 24"
    )
    same = combine("x", [part("skip", "onnx 1.14 has no onnx.reference")] * 2)
    assert same["detail"] == "onnx 1.14 has no onnx.reference"


def test_the_first_part_that_neither_passed_nor_skipped_decides() -> None:
    got = combine(
        "annotations",
        [
            part("pass", "fine"),
            part("flaky", "failed 1 of 4 runs", phase="compare"),
            part("fail", "reference run 1: violations", phase="compare"),
        ],
    )
    assert (got["outcome"], got["detail"], got["check"]) == (
        "flaky",
        "failed 1 of 4 runs",
        "annotations",
    )
    assert got["seconds"] == 1.5
