"""onnx-compat: a cross-version compatibility matrix runner for ONNX and ONNX Runtime.

Exports resolve lazily: this file also runs inside every cell (as the parent of
`compat.cell`, Python 3.9+, onnx/onnxruntime/numpy only) and imports nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Case": "compat.core.case",
    "CustomCheck": "compat.core.case",
    "KnownFailure": "compat.core.case",
    "Detector": "compat.core.case",
    "Optimized": "compat.core.case",
    "CellRecord": "compat.core.outcomes",
    "CellState": "compat.core.outcomes",
    "CheckResult": "compat.core.outcomes",
    "Outcome": "compat.core.outcomes",
    "Report": "compat.core.report",
    "read_json": "compat.core.report",
    "check_run": "compat.cell.observe",
    "scan": "compat.corpus.scan",
    "Finding": "compat.corpus.scan",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'compat' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
