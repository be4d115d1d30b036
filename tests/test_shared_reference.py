"""One reference evaluation per case and run (issue 35): `reference`, `annotations`,
`inferred_annotations` and `annotations_builtin`'s own verdict each ran onnx's
reference evaluator over the whole model again — four times per run of a real model,
most of triage's time. They now share one, in the worker, for the case they run; the
verdicts are those each check gave alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from onnx.reference import ReferenceEvaluator

from compat.cell import observe
from compat.cell.loop import run_task
from compat.corpus.discover import write_case
from compat.corpus.dropin import load_dropins
from tests.conftest import ROOT

CHECKS = ("reference", "annotations", "inferred_annotations", "annotations_builtin")


def _records(directory: str, cases: dict[str, Any]) -> list[dict[str, Any]]:
    return [run_task(cases, {"case": "c", "check": c, "case_dir": directory}) for c in CHECKS]


def test_the_checks_of_a_case_share_one_reference_evaluation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drop-in model run by the four checks in one worker: the evaluator runs once
    for the shared values (plus onnx's own check_shape_annotations run, which is the
    other opinion `annotations_builtin` compares with); each check's verdict is the one
    it gives in a worker of its own."""
    _, _, cases = load_dropins(ROOT / "examples" / "models")
    directory = str(write_case(cases[0], tmp_path).directory)
    alone = []
    for check in CHECKS:  # each as in a worker of its own: nothing shared
        observe._last.update(case=None)
        alone.append(run_task({}, {"case": "c", "check": check, "case_dir": directory}))
    runs: list[str] = []
    original = ReferenceEvaluator.run

    def counted(self: ReferenceEvaluator, *args: Any, **kwargs: Any) -> Any:
        runs.append(type(self).__name__)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ReferenceEvaluator, "run", counted)
    other = tmp_path / "other"
    directory = str(write_case(cases[0], other).directory)  # a case this worker has not seen
    together = _records(directory, {})
    assert [(r["outcome"], r["detail"]) for r in together] == [
        (r["outcome"], r["detail"]) for r in alone
    ]
    assert all(r["outcome"] == "pass" for r in together[:3]), together
    builtin = together[3]["outcome"] == "pass"  # onnx >= 1.23: its own evaluation too
    assert len(runs) == 1 + builtin, runs
