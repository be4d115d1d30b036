"""Case-specific check of the onehot_forms family, run inside each cell's worker.

Imports only the standard library, numpy, onnx and the in-cell package (compat.cell,
staged into every cell), and stays valid on Python 3.9.
"""

from __future__ import annotations

import warnings
from typing import Any, cast

import numpy as np

from compat.cell.compare import compare_outputs  # in the cell: the staged compat.cell


def reference_strict(case: Any) -> str:
    """onnx's reference evaluator computes the oracle's outputs with numpy's
    deprecations made errors: the same answer whichever numpy the cell has, since a
    conversion numpy 1.25 deprecated (a 1-element array taken as a scalar) fails with a
    DeprecationWarning before numpy 2.4 and a TypeError from it on."""
    from onnx.reference import ReferenceEvaluator

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        got = ReferenceEvaluator(case.model).run(None, case.inputs)
    names = [o.name for o in case.model.graph.output]
    problem = cast(Any, compare_outputs)(
        names, got, case.expected, case.spec["rtol"], case.spec["atol"]
    )
    if problem:
        raise AssertionError(problem)
    return f"outputs match the oracle with numpy {np.__version__}'s deprecations as errors"
