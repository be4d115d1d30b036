"""The ONNX backend suite as a case family: its name, its checks and its description.

Named here, below every layer, because the renderers (the scoreboard, the HTML page)
recognise the suite's results by name; compat/corpus/backend_suite.py makes its cases.
"""

from __future__ import annotations

from compat.cell.checks import CHECKS as TABLE

FAMILY = "onnx_backend"
#: The checks run on the suite, in the order its scoreboard shows them: the table's
#: `suite` column.
CHECKS = tuple(c.name for c in sorted((c for c in TABLE if c.suite), key=lambda c: c.suite))
DESCRIPTION = (
    "ONNX's backend node tests (onnx.backend.test), generated once by the host's onnx and "
    "run in every cell; `ort_run` and `reference` compare with the suite's expected "
    "outputs at its tolerances."
)
