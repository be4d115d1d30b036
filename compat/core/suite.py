"""The ONNX backend suite as a case family: its name, its checks and its description.

Named here, below every layer, because the renderers (the scoreboard, the HTML page)
recognise the suite's results by name; compat/corpus/backend_suite.py makes its cases.
"""

from __future__ import annotations

FAMILY = "onnx_backend"
CHECKS = ("ort_run", "reference", "shape_inference", "inferred_annotations")
DESCRIPTION = (
    "ONNX's backend node tests (onnx.backend.test), generated once by the host's onnx and "
    "run in every cell; `ort_run` and `reference` compare with the suite's expected "
    "outputs at its tolerances."
)
