"""Checks of onnxruntime: outputs at every optimization level, the optimized graph."""

from __future__ import annotations

import os
import tempfile

from compat.cell.blame import blame
from compat.cell.compare import compare_outputs, largest_difference, tolerance_of
from compat.cell.session import ORT_LEVELS, open_session, oracle_name
from compat.cell.verdict import Phase, Verdict, fail, skip

#: How a pass says its levels differ within the tolerance (triage reads it).
WITHIN = "; within rtol "
#: What stands where a failure would name the optimizers responsible, when the task
#: asks for no search (`blame: false`): triage's reduction compares what precedes it
#: first, and searches only for a candidate that fails the same way that far.
UNSEARCHED = "optimizers not searched"


def check_ort_run(case):
    """Every optimization level computes the oracle's outputs, and computes them the same
    way twice: a second run of the same session on the same inputs must agree. A level
    that differs while `disabled` agrees names the optimizer responsible (blame.py)."""
    expected = case.expected
    if not expected:
        raise skip("case declares no expected outputs")
    levels = case.spec.get("ort_levels") or ORT_LEVELS
    tolerance = tolerance_of(case.spec)
    failing = {}  # level -> how it differs
    largest = None  # (difference, output, level): the farthest apart a passing level is
    for level in levels:
        session = open_session(case, level)
        names = [o.name for o in session.get_outputs()]
        with Phase("run@" + level):
            got = session.run(None, case.inputs)
            again = session.run(None, case.inputs)
        differ = compare_outputs(names, again, dict(zip(names, got)), *tolerance)
        if differ:
            raise Verdict(
                "flaky",
                "run@" + level,
                "nondeterministic: two runs at level %s differ: %s" % (level, differ),
            )
        problem = compare_outputs(names, got, expected, *tolerance)
        if problem:
            failing[level] = problem
            continue
        apart = largest_difference(names, got, expected)
        if apart and (largest is None or apart[0] > largest[0]):
            largest = (*apart, level)
    if failing:
        raise fail("compare", _failures(case, failing, expected, tolerance))
    # onnxruntime alone decides: whether onnx's reference evaluator agrees is `reference`'s
    detail = "outputs match %s at levels %s" % (oracle_name(case), ", ".join(levels))
    if largest:
        rtol, atol = tolerance[2].get(largest[1], tolerance[:2])
        detail += WITHIN + "%g, atol %g: up to %.3g apart (output %r at level %s)" % (
            (rtol, atol, *largest)
        )
    return detail


def _failures(case, failing, expected, tolerance):
    """One line for every level that differs, levels that differ alike together, each
    with the optimizers responsible when `disabled` agrees with the oracle."""
    problems = {}  # message -> levels, so one problem seen at several levels reads once
    for level, problem in failing.items():
        problems.setdefault(problem, []).append(level)
    searched = not (case.task and case.task.get("blame") is False)
    lines = []
    for problem, levels in problems.items():
        line = "%s: %s" % (", ".join(levels), problem)
        if "disabled" not in failing:
            line += _blamed(case, levels, expected, tolerance) if searched else "; " + UNSEARCHED
        lines.append(line)
    return "; ".join(lines)


def _blamed(case, levels, expected, tolerance):
    """The line's tail naming the optimizers responsible at `levels` ("; ..."): one
    sentence when it is alike at each level, else one per sentence with its levels."""
    blamed = {}  # sentence -> levels
    for level in levels:
        why = blame(case, level, expected, tolerance, oracle_name(case))
        blamed.setdefault(why, []).append(level)
    if len(blamed) == 1:
        return "; " + next(iter(blamed))
    return "".join("; at %s: %s" % (", ".join(v), k) for k, v in blamed.items())


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
