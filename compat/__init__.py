"""onnx-compat: a cross-version compatibility matrix runner for ONNX and ONNX Runtime."""

from __future__ import annotations

from compat.case import Case, CustomCheck, KnownFailure, Optimized
from compat.outcomes import CellRecord, CellState, CheckResult, Outcome
from compat.report import Report, read_json

__all__ = [
    "Case",
    "CellRecord",
    "CellState",
    "CheckResult",
    "CustomCheck",
    "KnownFailure",
    "Optimized",
    "Outcome",
    "Report",
    "read_json",
]
