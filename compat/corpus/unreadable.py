"""A user's model a release cannot read is the model's incompatibility with that release.

In a cell, a check whose release cannot know the model at all (an IR version or opset
newer than it reads: compat/cell/gates.py, compat/cell/session.py) skips at the phase
`protocol.LIMIT`: for a corpus case, whose question is a construct, that release does
not apply, and the skip stays. For a user's own model (a drop-in: its oracle is
onnxruntime) "which releases load my model?" is the question, so the host reads the
skip as `unsupported`: drawn red, counted in works-since lines and the exit code, and
said as the limit, `onnxruntime 1.15.1 reads IR ≤ 9; this model is IR 10`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from compat.cell.protocol import LIMIT
from compat.core.case import Case
from compat.core.outcomes import CheckResult, Outcome

#: the gates' words (compat/cell/gates.py, session.py):
#: `IR version 10 > max 9 of onnxruntime 1.15.1`
_SAID = re.compile(r"^(IR version|opset) (\d+) > max (\d+) of (onnxruntime|onnx) (\S+)$")


def own_model(case: Case) -> bool:
    """A user's model: a drop-in, whose oracle is onnxruntime with optimizations off."""
    return case.oracle == "onnxruntime" and case.command is None


def read_limit(result: CheckResult, case: Case) -> CheckResult:
    """A user's model skipped at a release's limit, as `unsupported` with the limit in
    words; any other result as it is."""
    if result.outcome is not Outcome.SKIP or result.phase != LIMIT or not own_model(case):
        return result
    found = _SAID.match(result.detail)
    if found is None:
        return replace(result, outcome=Outcome.UNSUPPORTED)
    what, value, most, package, release = found.groups()
    what = "IR" if what == "IR version" else what
    detail = f"{package} {release} reads {what} ≤ {most}; this model is {what} {value}"
    return replace(result, outcome=Outcome.UNSUPPORTED, detail=detail)
