"""Checks of onnxruntime: outputs at every optimization level, the optimized graph."""

from __future__ import annotations

import os
import tempfile

from compat.cell.compare import compare_outputs
from compat.cell.session import ORT_LEVELS, open_session, oracle_name
from compat.cell.verdict import Phase, Verdict, fail, skip


def check_ort_run(case):
    """Every optimization level computes the oracle's outputs, and computes them the same
    way twice: a second run of the same session on the same inputs must agree."""
    expected = case.expected
    if not expected:
        raise skip("case declares no expected outputs")
    problems = {}  # message -> levels, so one problem seen at several levels reads once
    levels = case.spec.get("ort_levels") or ORT_LEVELS
    rtol, atol = case.spec["rtol"], case.spec["atol"]
    for level in levels:
        session = open_session(case, level)
        names = [o.name for o in session.get_outputs()]
        with Phase("run@" + level):
            got = session.run(None, case.inputs)
            again = session.run(None, case.inputs)
        differ = compare_outputs(names, again, dict(zip(names, got)), rtol, atol)
        if differ:
            raise Verdict(
                "flaky",
                "run@" + level,
                "nondeterministic: two runs at level %s differ: %s" % (level, differ),
            )
        problem = compare_outputs(names, got, expected, rtol, atol)
        if problem:
            problems.setdefault(problem, []).append(level)
    if problems:
        raise fail("compare", "; ".join("%s: %s" % (", ".join(v), k) for k, v in problems.items()))
    # onnxruntime alone decides: whether onnx's reference evaluator agrees is `reference`'s
    return "outputs match %s at levels %s" % (oracle_name(case), ", ".join(levels))


def check_ort_optimized(case):
    import onnx

    want = case.spec.get("optimized")
    if not want:
        raise skip("case declares no optimized structure")
    level = want.get("level", "all")
    with tempfile.TemporaryDirectory(prefix="compat-opt-") as folder:
        path = os.path.join(folder, "optimized.onnx")
        open_session(case, level, optimized_path=path)
        with Phase("load"):
            optimized = onnx.load(path)
    counts = {}
    for node in optimized.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    wrong = []
    for op_type in sorted(want["op_counts"]):
        expected = want["op_counts"][op_type]
        if counts.get(op_type, 0) != expected:
            wrong.append("%s x%d (expected %d)" % (op_type, counts.get(op_type, 0), expected))
    graph = ", ".join(node.op_type for node in optimized.graph.node)
    if wrong:
        raise fail(
            "compare",
            "%s: %s; optimized graph: [%s]"
            % (want.get("meaning", "unexpected structure"), ", ".join(wrong), graph),
        )
    return "optimized graph: [%s]" % graph
