"""Checks of shape annotations on real runs: declared, inferred, and onnx's own checker."""

from __future__ import annotations

from compat.cell.gates import require_onnx_support
from compat.cell.verdict import Phase, Verdict, fail, one_line, skip


def check_run(model, feeds, runtime):
    """One observed run, judged. Imported when a check runs: the table of checks is
    read by the host too, which must not load numpy and onnx to list check names."""
    from compat.cell.observe import check_run as observe_and_judge

    return observe_and_judge(model, feeds, runtime)


def _expected_violations(case, unobservable):
    return sorted(k for k in case.spec.get("violations", []) if k.split(":")[0] not in unobservable)


def check_annotations(case):
    """The case's declared annotations hold (or are violated exactly as declared) on real runs."""
    from compat.cell import semantics as ann

    model = case.model
    try:
        import onnx.reference  # noqa: F401

        runtimes = ("ort", "reference")
    except ImportError:
        runtimes = ("ort",)
    notes = []
    for runtime in runtimes:
        for index, feeds in enumerate(case.runs):
            label = "%s run %d" % (runtime, index + 1)
            verdict = check_run(model, feeds, runtime)
            expected = _expected_violations(case, set(verdict.unchecked))
            found = sorted(set(verdict.keys))
            inputs_violated = any(v.precondition for v in verdict.violations)
            if verdict.error and not inputs_violated:
                raise Verdict("error", "run", "%s: %s" % (label, verdict.error))
            if found != expected:
                messages = "; ".join(v.message for v in verdict.violations) or "none"
                raise fail(
                    "compare",
                    "%s: violations %s, expected %s (%s)" % (label, found, expected, messages),
                )
            checked = len(ann.annotations_of(model.graph)) - len(verdict.unchecked)
            notes.append(
                "%s: %d checked, %d unchecked%s"
                % (label, checked, len(verdict.unchecked), ", found %s" % found if found else "")
            )
    return "; ".join(notes)


def check_inferred_annotations(case):
    """Every annotation this onnx release's shape inference adds or refines holds on real runs."""
    import onnx.shape_inference

    from compat.cell import semantics as ann

    model = case.model
    require_onnx_support(model)
    with Phase("infer"):
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    before = ann.annotations_of(model.graph)
    after = ann.annotations_of(inferred.graph)
    changed = sorted(n for n, t in after.items() if n not in before or before[n] != t)
    if not changed:
        return "inference adds or refines no annotation"
    wrong = []
    observed = set()
    for index, feeds in enumerate(case.runs):
        verdict = check_run(inferred, feeds, "ort")
        if verdict.error:
            raise Verdict("error", "run", "run %d: %s" % (index + 1, verdict.error))
        observed |= set(changed) - set(verdict.unchecked)
        for v in verdict.violations:
            if v.value in changed and v.value not in before:
                wrong.append(
                    "run %d: inferred %s for %r, but %s"
                    % (index + 1, ann.shape_text(after[v.value]), v.value, v.message)
                )
            elif v.value in changed:
                wrong.append(
                    "run %d: refined %s to %s for %r, but %s"
                    % (
                        index + 1,
                        ann.shape_text(before[v.value]),
                        ann.shape_text(after[v.value]),
                        v.value,
                        v.message,
                    )
                )
    if wrong:
        raise fail("compare", "; ".join(wrong))
    return "%d inferred annotations hold (%d observed, %d inside subgraphs unchecked)" % (
        len(changed),
        len(observed),
        len(changed) - len(observed),
    )


def check_annotations_builtin(case):
    """onnx's own ReferenceEvaluator(check_shape_annotations=True) agrees with our verdict."""
    import inspect

    import onnx

    model = case.model
    require_onnx_support(model)
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        raise skip("onnx %s has no onnx.reference" % onnx.__version__) from None
    if "check_shape_annotations" not in inspect.signature(ReferenceEvaluator.__init__).parameters:
        raise skip(
            "onnx %s has no ReferenceEvaluator(check_shape_annotations=...) (1.23+)"
            % onnx.__version__
        )
    from onnx.reference.shape_annotation_checker import ShapeAnnotationError

    notes = []
    for index, feeds in enumerate(case.runs):
        ours = check_run(model, feeds, "reference")
        try:
            ReferenceEvaluator(model, check_shape_annotations=True).run(None, feeds)
            theirs, message = "holds", ""
        except ShapeAnnotationError as exc:
            theirs, message = "violated", str(exc)
        except Exception as exc:
            theirs, message = "error", one_line(exc)
        mine = (
            "error" if ours.error and not ours.violations else ("holds" if ours.ok else "violated")
        )
        if mine != theirs:
            detail = "; ".join(v.message for v in ours.violations) or ours.error or ""
            raise fail(
                "compare",
                "run %d: ours says %s (%s), onnx says %s (%s)"
                % (index + 1, mine, detail or "-", theirs, message or "-"),
            )
        if mine == "violated" and "'%s'" % ours.violations[0].value not in message:
            raise fail(
                "compare",
                "run %d: both say violated, but ours first names %r, onnx: %s"
                % (index + 1, ours.violations[0].value, message),
            )
        notes.append("run %d: both say %s" % (index + 1, mine))
    return "; ".join(notes)
