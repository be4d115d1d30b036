"""Checks of the onnx package: checker, shape inference, reference evaluator, converter."""

from __future__ import annotations

import os
import re
import tempfile

from compat.cell.compare import compare_outputs, tensor_shape, tolerance_of
from compat.cell.gates import require_onnx_support
from compat.cell.session import oracle_name, ort_session
from compat.cell.verdict import Phase, Verdict, fail, one_line, skip


def check_checker(case):
    import onnx
    import onnx.checker
    import onnx.shape_inference

    model = case.model
    require_onnx_support(model)
    # full_check runs strict shape inference: its InferenceError is a rejection too
    rejections = (onnx.checker.ValidationError, onnx.shape_inference.InferenceError)
    with Phase("check", as_fail=rejections):
        onnx.checker.check_model(model, full_check=True)
    return "onnx %s accepts the model" % onnx.__version__


def check_shape_inference(case):
    import onnx
    import onnx.shape_inference

    model = case.model
    require_onnx_support(model)
    errors = (onnx.shape_inference.InferenceError, onnx.checker.ValidationError)
    with Phase("infer", as_fail=errors):
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    expected = case.spec.get("output_shapes") or {}
    known = {v.name: v for v in list(inferred.graph.output) + list(inferred.graph.value_info)}
    for name in sorted(expected):
        want = expected[name]
        if name not in known:
            raise fail("compare", "no shape inferred for %r, expected %s" % (name, want))
        got = tensor_shape(known[name].type)
        if got != want:
            raise fail("compare", "inferred shape of %r is %s, expected %s" % (name, got, want))
    if expected:
        return "inferred %s" % ", ".join("%s: %s" % (n, expected[n]) for n in sorted(expected))
    return "strict shape inference succeeded"


def reference_outputs(case):
    """Runs onnx's reference evaluator on the case's inputs: (output names, values).

    `skip` when this onnx lacks what the model needs (no onnx.reference, or no
    implementation of one of its ops): a missing capability, not a wrong answer.
    """
    import onnx

    model = case.model
    require_onnx_support(model)
    try:
        import onnx.reference  # (the evaluation below is shared with other checks)
    except ImportError:
        raise skip("onnx %s has no onnx.reference" % onnx.__version__) from None
    from compat.cell.observe import shared_recorder, shared_reference

    with Phase("session", skip_when=capability_gap, why_skip=missing_capability):
        shared_recorder(case.case_dir, model)
    names = [o.name for o in model.graph.output]
    with Phase("run", skip_when=capability_gap, why_skip=missing_capability):
        got = shared_reference(case.case_dir, model, 0, case.inputs)[0]
    return names, got


#: How onnx's reference evaluator says it lacks an op, or the op's version:
#: "No implementation for operator 'DequantizeLinear' domain '' and version 18, found 19,
#: 21, 23, 25, None." (1.16-1.23), "... operator 'ZipMap' and domain 'ai.onnx.ml'".
_NO_OP = re.compile(
    r"implementation for operator '([^']+)'(?: and)? domain '([^']*)'"
    r"(?: and version (\d+)(?:, found ([^.]*))?)?"
)


def capability_gap(exc):
    """Whether the reference evaluator failed for lack of an implementation (an op, an
    op version, an attribute form): a skip, never the model's failure."""
    return isinstance(exc, NotImplementedError) or (
        isinstance(exc, RuntimeError) and _NO_OP.search(str(exc)) is not None
    )


def missing_capability(exc):
    """ "onnx 1.23.2's reference evaluator has no ai.onnx.ml ZipMap", from its message."""
    import onnx

    text = exc if isinstance(exc, str) else str(exc)
    found = _NO_OP.search(text)
    where = "onnx %s's reference evaluator" % onnx.__version__
    if found:
        op, domain, version, has = found.groups()
        domain = domain or "ai.onnx"
        if version:
            has = (" (it has %s)" % has.replace(", None", "")) if has else ""
            return "%s has no %s %s-%s%s" % (where, domain, op, version, has)
        return "%s has no %s %s" % (where, domain, op)
    return "%s cannot run this model: %s" % (where, text if exc is text else one_line(exc))


def check_reference(case):
    try:
        expected = case.expected
    except Verdict as verdict:
        if case.spec.get("oracle") != "onnxruntime":
            raise
        raise skip(
            "no oracle: onnxruntime, this case's oracle, %s" % oracle_failure(verdict)
        ) from None
    if not expected:
        raise skip("case declares no expected outputs")
    names, got = reference_outputs(case)
    problem = compare_outputs(names, got, expected, *tolerance_of(case.spec))
    if problem:
        raise fail("compare", problem)
    return "outputs match %s" % oracle_name(case)


def oracle_failure(verdict):
    if verdict.outcome == "skip":
        return "cannot load the model (%s)" % verdict.detail
    return "failed (%s@%s: %s)" % (verdict.outcome, verdict.phase, verdict.detail)


def check_version_converter(case):
    """convert_version to the case's target opset, check the result, run it in onnxruntime
    on the same inputs and compare with the original model's outputs there."""
    import onnx
    import onnx.checker
    import onnx.version_converter

    target = case.spec.get("convert_to")
    if not target:
        raise skip("case names no target opset")
    model = case.model
    require_onnx_support(model)
    newest = onnx.defs.onnx_opset_version()
    if target > newest:
        raise skip("opset %d > max %d of onnx %s" % (target, newest, onnx.__version__))
    with Phase("convert"):
        converted = onnx.version_converter.convert_version(model, target)
    rejections = (onnx.checker.ValidationError, onnx.shape_inference.InferenceError)
    with Phase("check", as_fail=rejections):
        onnx.checker.check_model(converted, full_check=True)
    with Phase("session@original"):
        want = ort_session(case.model_path, "disabled")
        names = [o.name for o in want.get_outputs()]
        expected = dict(zip(names, want.run(None, case.inputs)))
    with tempfile.TemporaryDirectory(prefix="compat-conv-") as folder:
        path = os.path.join(folder, "converted.onnx")
        onnx.save(converted, path)
        try:
            session = ort_session(path, "disabled")
            got = session.run(None, case.inputs)
        except Exception as exc:
            text = "the checker accepts the converted model, onnxruntime does not: "
            raise fail("run", text + one_line(exc)) from None
    problem = compare_outputs(names, got, expected, *tolerance_of(case.spec))
    if problem:
        text = "converted to opset %d, the model computes something else: %s" % (target, problem)
        raise fail("compare", text)
    return "converted to opset %d: valid, same outputs in onnxruntime" % target
