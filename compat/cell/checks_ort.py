"""Checks of onnxruntime: outputs at every optimization level, the optimized graph."""

from __future__ import annotations

import os
import tempfile

from compat.cell.compare import compare_outputs
from compat.cell.session import ORT_LEVELS, open_session, oracle_name
from compat.cell.verdict import Phase, fail, skip


def check_ort_run(case):
    expected = case.expected
    if not expected:
        raise skip("case declares no expected outputs")
    problems = []
    levels = case.spec.get("ort_levels") or ORT_LEVELS
    for level in levels:
        session = open_session(case, level)
        names = [o.name for o in session.get_outputs()]
        with Phase("run@" + level):
            got = session.run(None, case.inputs)
        problem = compare_outputs(names, got, expected, case.spec["rtol"], case.spec["atol"])
        if problem:
            problems.append("%s: %s" % (level, problem))
    if problems:
        raise fail("compare", "; ".join(problems))
    return "outputs match %s at levels %s" % (oracle_name(case), ", ".join(levels))


def check_ort_optimized(case):
    import onnx

    want = case.spec.get("optimized")
    if not want:
        raise skip("case declares no optimized structure")
    level = want.get("level", "all")
    folder = tempfile.mkdtemp(prefix="compat-opt-")
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
