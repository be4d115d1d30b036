"""A check computed in parts: each part exercises fewer packages, so the engine computes
it once per distinct set of *their* versions, and one combined result is shown.

The annotation checks observe a model with onnx's reference evaluator (its result
depends on onnx alone) and with onnxruntime (onnxruntime alone): as one task, both
observations would run again in every cell; as parts, the reference observation runs
once per onnx release and the onnxruntime one once per onnxruntime release.

`combine` is the one rule that joins the parts' raw records, used by the host's engine
and, through `run_parts`, by the whole check in a cell (a repro, a custom runner): a
part that neither passed nor skipped decides the result (the first in part order);
else a part that passed gives the details, and a skipped part is "not observed by ..."
beside them; when every part skipped, the result is a skip with every part's reason.
A part's skip detail reads "WHAT: REASONS", the same WHAT for every part of a check.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Sequence

from compat.cell.protocol import record
from compat.cell.verdict import Verdict

#: Between a check's name and its part's in a task's name: `annotations:ort`.
SEPARATOR = ":"


def _reasons(detail):
    return detail.split(": ", 1)[1] if ": " in detail else detail


def combine(check: str, records: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """One raw record for `check` from its parts' raw records, in part order (records as
    compat/cell/protocol.py builds them, or as read back from the wire)."""
    seconds = round(sum(float(r.get("seconds", 0)) for r in records), 4)
    whole = {"check": check, "seconds": seconds}
    decisive = [r for r in records if r["outcome"] not in ("pass", "skip")]
    if decisive:
        return dict(decisive[0], **whole)
    passed = [r for r in records if r["outcome"] == "pass"]
    skipped = [r for r in records if r["outcome"] == "skip"]
    reasons = "; ".join(dict.fromkeys(_reasons(r["detail"]) for r in skipped))
    if not passed:
        if len({r["detail"] for r in skipped}) == 1:  # the same reason for every part
            return dict(skipped[0], **whole)
        what = skipped[0]["detail"].split(": ", 1)[0]
        return dict(skipped[0], detail="%s: %s" % (what, reasons), **whole)
    details = list(dict.fromkeys(r["detail"] for r in passed if r["detail"]))
    if skipped:
        details.append("not observed by %s" % reasons)
    return dict(passed[0], detail="; ".join(details), traceback="", **whole)


def run_parts(case, check, parts):
    """The whole check in one process: every part run, then `combine`d."""
    records = []
    for part in parts:
        try:
            detail = part.function(case) or ""
            records.append(record("pass", detail, traceback=""))
        except Verdict as verdict:
            records.append(
                record(verdict.outcome, verdict.detail, verdict.phase, traceback=verdict.trace)
            )
    combined = combine(check, records)
    if combined["outcome"] == "pass":
        return combined["detail"]
    raise Verdict(combined["outcome"], combined["phase"], combined["detail"], combined["traceback"])
