"""The reference page of the JSON formats, generated from the records that write them:
matrix.json's fields from a serialized record of each kind (compat/core/report.py,
compat/core/outcomes.py) and the case spec's from its TypedDicts (compat/cell/protocol.py),
each with its meaning (compat/cli/reference_meanings.py)."""

from __future__ import annotations

import typing
from typing import Any

from compat.cli.reference_meanings import CASE_SPEC, MATRIX_JSON
from compat.cli.reference_pages import GENERATED, table
from compat.render.text import md_code, md_text


def _json_type(value: Any) -> str:
    for kind, name in (
        (bool, "boolean"),
        (str, "string"),
        (int, "integer"),
        (float, "number"),
        (dict, "object"),
        (list, "array"),
    ):
        if isinstance(value, kind):
            return name
    return "null"


def samples() -> dict[str, dict[str, Any]]:
    """One serialized record of each kind matrix.json holds, every optional field set:
    the fields the page lists and their JSON types."""
    from compat.core.install import InstallRequest
    from compat.core.outcomes import CellRecord, CellState, CheckResult, Outcome
    from compat.core.report import CaseInfo, Report

    cell = CellRecord(
        "onnx1.18.0-ort1.24.4",
        "1.18.0",
        "1.24.4",
        CellState.READY,
        {"onnx": "1.18.0"},
        "3.12.1",
        "Linux",
        "",
        InstallRequest(("onnx==1.18.0",)),
        (10, 21),
        {"onnx": "1.18.0"},
    )
    case = CaseInfo(
        "f.v", "f", "a case", "0" * 64, {"checker": "onnx"}, ({"package": "onnx"},), ("tag",)
    )
    result = CheckResult(
        cell.id,
        case.id,
        "checker",
        Outcome.PASS,
        "ok",
        "load",
        0.1,
        "",
        "",
        "",
        "logs/x.log",
        ("tests/test_x.py::test_a",),
    )
    report = Report((cell,), (case,), (result,), {"onnx": (cell.id,)}, {"f": "a family"})
    return {
        "the file": report.serialize(),
        "cells[]": cell.serialize(),
        "cases[]": case.serialize(),
        "results[]": dict(result.serialize()),
    }


def json_page() -> str:
    from compat.cell import protocol

    found = samples()
    lines = [
        "# JSON formats",
        "",
        f"{GENERATED}, from the records that write them. `reports/matrix.json` is every "
        "result of a run: every other report renders from it, and `onnx-compat report "
        "--results FILE` renders it again. Keys are written sorted; the `results` are one "
        "a line.",
    ]
    for place, fields in MATRIX_JSON.items():
        sample = found.get(place, {})
        lines += ["", f"## {md_code(place)}" if place != "the file" else "## matrix.json", ""]
        lines += table(
            ("field", "type", "meaning"),
            [
                (
                    md_code(k),
                    _json_type(sample[k]) if k in sample else "",
                    md_text(v),
                )
                for k, v in fields.items()
            ],
        )
    lines += [
        "",
        "## The case spec",
        "",
        "`case.json` in a written case folder: what the checks inside a cell read of a "
        "case (compat/cell/protocol.py), besides its model and arrays. Optional fields "
        "are marked.",
    ]
    for name, fields in CASE_SPEC.items():
        spec = getattr(protocol, name)
        hints = typing.get_type_hints(spec)
        lines += ["", f"### `{name}`", ""]
        lines += table(
            ("field", "type", "meaning"),
            [
                (
                    md_code(k) + ("" if k in spec.__required_keys__ else " (optional)"),
                    md_code(_python_type(hints[k])),
                    md_text(v),
                )
                for k, v in fields.items()
            ],
        )
    lines += [
        "",
        "## Other JSON",
        "",
        '`onnx-compat plan --json` prints `{"include": [...]}`, one object per cell '
        "(`cell`, `onnx`, `onnxruntime`) or, with `--shards N`, per shard (`shard`, "
        "`cells`), with `python` on a Python axis: a CI job matrix. `onnx-compat "
        'annotations --json` prints `{"ok", "runs": [{"ok", "bindings", '
        '"violations", "unchecked"}]}`.',
    ]
    return "\n".join(lines) + "\n"


def _python_type(hint: Any) -> str:
    return (
        str(hint)
        .replace("typing.", "")
        .replace("compat.cell.protocol.", "")
        .replace("NoneType", "None")
    )
