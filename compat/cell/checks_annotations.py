"""Checks of shape annotations on real runs: declared, inferred, and onnx's own checker."""

from __future__ import annotations

from compat.cell.gates import require_onnx_support
from compat.cell.verdict import Phase, Verdict, bounded, fail, one_line, skip


def check_runs(model, runs, runtime, case=None):
    """Every run of the model with one runtime (built once), judged; `case`'s reference
    values shared between its checks (a model with its nodes). Imported when a check
    runs: the host reads the table of checks too, and must not load numpy and onnx to
    list check names."""
    from compat.cell.observe import check_runs as observe_and_judge

    return observe_and_judge(model, runs, runtime, case)


def _expected_violations(case, unobservable):
    return sorted(k for k in case.spec.get("violations", []) if k.split(":")[0] not in unobservable)


#: The runtimes that observe values, in the order their results are told.
RUNTIMES = ("ort", "reference")


def observers(model, wanted=RUNTIMES):
    """(the `wanted` runtimes that can run this model here, why each other one cannot).

    onnxruntime observes top-level values, onnx's reference evaluator every value,
    subgraph bodies included. A runtime too old for the model, or without
    onnx.reference, is not an observer: a missing capability, not a verdict.
    """
    import onnx

    from compat.cell.session import beyond_ort

    usable = []
    unable = []
    if "ort" in wanted:
        reason = beyond_ort(model)
        if reason:
            unable.append("ort: %s" % reason)
        else:
            usable.append("ort")
    if "reference" in wanted:
        try:
            import onnx.reference

            try:
                require_onnx_support(model)
                usable.append("reference")
            except Verdict as verdict:
                unable.append("reference: %s" % verdict.detail)
        except ImportError:
            unable.append("reference: onnx %s has no onnx.reference" % onnx.__version__)
    return usable, unable


def why_unobserved(label, error):
    """A runtime's failure to run, short: a missing op reads as what it is."""
    if "implementation for operator" in error:
        from compat.cell.checks_onnx import missing_capability

        return "%s: %s" % (label, missing_capability(error))
    return "%s: %s" % (label, bounded(error, 300))


def produced(model):
    """The annotated values a run produces (inputs and initializers aside)."""
    from compat.cell import semantics as ann

    given = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
    return sorted(n for n in ann.annotations_of(model.graph) if n not in given)


def named(names, most=5):
    """`a, b, c` or `a, b, c, d, e and 7 more`."""
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (" and %d more" % (len(names) - most) if len(names) > most else "")


def check_annotations(case, wanted=RUNTIMES):
    """The case's declared annotations hold (or are violated exactly as declared) on real
    runs, observed with every `wanted` runtime that runs the model; `skip` when none
    observes any."""
    from compat.cell import semantics as ann

    model = case.model
    runtimes, unable = observers(model, wanted)
    notes = []
    observed = set()
    seen_by = {}
    for runtime in runtimes:
        for index, verdict in enumerate(check_runs(model, case.runs, runtime, case.case_dir)):
            label = "%s run %d" % (runtime, index + 1)
            inputs_violated = any(v.precondition for v in verdict.violations)
            if verdict.error and not inputs_violated:
                unable.append(why_unobserved(label, verdict.error))
                continue  # this runtime saw nothing of this run: no verdict either way
            expected = _expected_violations(case, set(verdict.unchecked))
            found = sorted(set(verdict.keys))
            if found != expected:
                messages = "; ".join(v.message for v in verdict.violations) or "none"
                raise fail(
                    "compare",
                    "%s: violations %s, expected %s (%s)" % (label, found, expected, messages),
                )
            seen = set(verdict.observed) | {v.value for v in verdict.violations}
            observed |= seen
            seen_by.setdefault(runtime, set()).update(seen)
            notes.append(
                "%s: %d of %d annotated values checked%s"
                % (
                    label,
                    len(verdict.observed),
                    len(produced(model)),
                    ", found %s" % found if found else "",
                )
            )
    if not observed:
        raise skip("no runtime observed an annotated value: %s" % "; ".join(unable or ["-"]))
    top = set(ann.top_level_names(model.graph))
    for runtime, seen in seen_by.items():  # a pass says what it did not see
        # onnxruntime shows top-level values only; onnx's reference evaluator every one
        can = [n for n in produced(model) if runtime != "ort" or n in top]
        unseen = [n for n in can if n not in seen]
        if unseen:
            notes.append("%s produced no %s" % (runtime, named(unseen)))
        inner = [n for n in produced(model) if n not in top and n not in seen]
        if runtime == "ort" and inner:
            notes.append("ort shows no value inside a subgraph (%s)" % named(inner))
    if unable:
        notes.append("not observed by %s" % "; ".join(unable))
    odd = ann.nonstandard_dims(model.graph)
    if odd:
        notes.append("%s declare a negative dim_value, read as unknown" % named(odd))
    return "; ".join(notes)


def check_inferred_annotations(case, wanted=RUNTIMES):
    """Every annotation this onnx release's shape inference adds or refines holds on real
    runs, observed with every `wanted` runtime that runs the inferred model."""
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
    runtimes, unable = observers(inferred, wanted)
    wrong = []
    observed = set()
    by = []
    for runtime in runtimes:
        for index, verdict in enumerate(check_runs(inferred, case.runs, runtime, case.case_dir)):
            label = "%s run %d" % (runtime, index + 1)
            if verdict.error:
                unable.append(why_unobserved(label, verdict.error))
                continue
            seen = set(changed) & (set(verdict.observed) | set(verdict.keys))
            if seen and runtime not in by:
                by.append(runtime)
            observed |= seen
            for v in verdict.violations:
                if v.value not in changed:
                    continue
                if v.value in before:
                    said = "refined %s to %s" % (
                        ann.shape_text(before[v.value]),
                        ann.shape_text(after[v.value]),
                    )
                else:
                    said = "inferred %s" % ann.shape_text(after[v.value])
                wrong.append("%s: %s for %r, but %s" % (label, said, v.value, v.message))
    if wrong:
        raise fail("compare", "; ".join(wrong))
    if not observed:
        raise skip(
            "none of the %d inferred annotations observed: %s"
            % (len(changed), "; ".join(unable or ["no runtime produced them"]))
        )
    top = set(ann.top_level_names(inferred.graph))
    missed = sorted(set(changed) - observed)
    inside = [n for n in missed if n not in top]
    detail = "%s: %d of %d inferred annotations checked, all hold" % (
        " and ".join(by),
        len(observed),
        len(changed),
    )
    if missed:
        detail += "; %d not observed (%d inside subgraphs)" % (len(missed), len(inside))
    return detail


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
    for index, (feeds, ours) in enumerate(
        zip(case.runs, check_runs(model, case.runs, "reference", case.case_dir))
    ):
        try:
            ReferenceEvaluator(model, check_shape_annotations=True).run(None, feeds)
            theirs = "holds"
            message = ""
        except ShapeAnnotationError as exc:
            theirs = "violated"
            message = str(exc)
        except Exception as exc:
            theirs = "error"
            message = one_line(exc)
        mine = (
            "error" if ours.error and not ours.violations else ("holds" if ours.ok else "violated")
        )
        if mine == theirs == "error":
            notes.append(
                "run %d: neither ran it (%s)"
                % (index + 1, why_unobserved("reference", ours.error or message))
            )
            continue
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
    if all("neither ran" in note for note in notes):
        raise skip("nothing compared: " + "; ".join(notes))
    return "; ".join(notes)
