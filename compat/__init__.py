"""onnx-compat: a cross-version compatibility matrix runner for ONNX and ONNX Runtime.

Exports resolve lazily: this file also runs inside every cell (as the parent of
`compat.cell`, Python 3.9+, onnx/onnxruntime/numpy only) and imports nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Case": "compat.case",
    "CustomCheck": "compat.case",
    "KnownFailure": "compat.case",
    "Optimized": "compat.case",
    "CellRecord": "compat.outcomes",
    "CellState": "compat.outcomes",
    "CheckResult": "compat.outcomes",
    "Outcome": "compat.outcomes",
    "Report": "compat.report",
    "read_json": "compat.report",
    "check_run": "compat.cell.observe",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'compat' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
