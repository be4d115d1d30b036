"""The in-cell worker: runs checks inside one pinned onnx/onnxruntime environment.

This file is executed by the environment's own interpreter, never imported by
the host. It imports only the standard library, onnx, onnxruntime and numpy,
and stays valid on Python 3.9 (the oldest Python with onnx/onnxruntime wheels).

Protocol (the host's only channel to this process):

    python worker.py PLAN.json RESULTS.jsonl START

PLAN.json holds ``{"tasks": [{"case", "check", "case_dir"}, ...]}``. The worker
runs tasks START, START+1, ... in order and appends one JSON line per finished
task to RESULTS.jsonl, flushed at once, so a crash loses nothing already done.
A case directory holds ``model.onnx``, ``data.npz`` (``in.NAME`` inputs and
``out.NAME`` expected outputs) and ``case.json`` (the case's expectations).
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder (compat/) heads sys.path; no module there
# may shadow the standard library's in the cell. Siblings are loaded by path.
if sys.path and sys.path[0] and __name__ == "__main__":
    del sys.path[0]

import faulthandler
import importlib.util
import json
import os
import tempfile
import time
import traceback

ORT_LEVELS = ("disabled", "basic", "extended", "all")


class Verdict(Exception):
    """Ends a check early with an outcome other than pass."""

    def __init__(self, outcome, phase, detail, trace=""):
        Exception.__init__(self, detail)
        self.outcome = outcome
        self.phase = phase
        self.detail = detail
        self.trace = trace  # the full traceback of the exception behind it, if any


def fail(phase, detail):
    return Verdict("fail", phase, detail)


def skip(detail):
    return Verdict("skip", "", detail)


def one_line(exc):
    text = "%s: %s" % (type(exc).__name__, str(exc).strip())
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " ".join(lines)[:2000]


class Phase:
    """Labels the phase of a check, so an exception is reported where it happened."""

    def __init__(self, name, as_fail=()):
        self.name = name
        self.as_fail = as_fail  # exception types that are the check's verdict, not an error

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or isinstance(exc, Verdict):
            return False
        trace = "".join(traceback.format_exception(exc_type, exc, tb))
        outcome = "fail" if self.as_fail and isinstance(exc, self.as_fail) else "error"
        raise Verdict(outcome, self.name, one_line(exc), trace)


class CaseData:
    """Lazily loaded files of one case directory, shared by all its checks."""

    def __init__(self, case_dir):
        self.case_dir = case_dir
        with open(os.path.join(case_dir, "case.json")) as f:
            self.spec = json.load(f)
        self.model_path = os.path.join(case_dir, "model.onnx")
        self._model = None
        self._data = None
        self._ort_outputs = None

    @property
    def model(self):
        if self._model is None:
            import onnx

            with Phase("load"):
                self._model = onnx.load(self.model_path)
        return self._model

    def _arrays(self):
        if self._data is None:
            if self.spec.get("encoding") == "pb":
                with Phase("load"):
                    self._data = load_pb_data(self.case_dir, self.model)
            else:
                import numpy as np

                with Phase("load"), np.load(os.path.join(self.case_dir, "data.npz")) as z:
                    # strings travel as fixed-width unicode; runtimes use object arrays
                    self._data = {
                        name: z[name].astype(object) if z[name].dtype.kind == "U" else z[name]
                        for name in z.files
                    }
        return self._data

    @property
    def inputs(self):
        return {k[3:]: v for k, v in self._arrays().items() if k.startswith("in.")}

    @property
    def expected(self):
        """The oracle's outputs: the case's numpy oracle, or onnxruntime unoptimized."""
        if self.spec.get("oracle") == "onnxruntime":
            if self._ort_outputs is None:
                session = open_session(self, "disabled")
                with Phase("oracle"):
                    names = [o.name for o in session.get_outputs()]
                    self._ort_outputs = dict(zip(names, session.run(None, self.inputs)))
            return self._ort_outputs
        return {k[4:]: v for k, v in self._arrays().items() if k.startswith("out.")}

    @property
    def runs(self):
        """The inputs of every run: `in.NAME` is run 0, `runK.NAME` run K."""
        runs = {0: self.inputs}
        for key, value in self._arrays().items():
            if key.startswith("run"):
                index, name = key[3:].split(".", 1)
                runs.setdefault(int(index), {})[name] = value
        return [runs[k] for k in sorted(runs)]


def load_pb_data(case_dir, model):
    """input_J.pb / output_J.pb, read as the model types each value (onnx's runner does so)."""
    import onnx
    from onnx import numpy_helper

    def decode(path, type_proto):
        with open(path, "rb") as f:
            content = f.read()
        kind = type_proto.WhichOneof("value")
        if kind == "sequence_type":
            proto = onnx.SequenceProto()
            proto.ParseFromString(content)
            return numpy_helper.to_list(proto)
        if kind == "optional_type":
            proto = onnx.OptionalProto()
            proto.ParseFromString(content)
            return numpy_helper.to_optional(proto)
        proto = onnx.TensorProto()
        proto.ParseFromString(content)
        return numpy_helper.to_array(proto)

    data = {}
    for prefix, key, values in (
        ("input", "in.", model.graph.input),
        ("output", "out.", model.graph.output),
    ):
        for j, info in enumerate(values):
            path = os.path.join(case_dir, "data", "%s_%d.pb" % (prefix, j))
            if os.path.exists(path):
                data[key + info.name] = decode(path, info.type)
    return data


_MODULES = {}


def sibling(name):
    """Loads compat/NAME.py by path: the cell has no compat package, only these files."""
    if name not in _MODULES:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
        spec = importlib.util.spec_from_file_location("compat_cell_" + name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while building
        spec.loader.exec_module(module)
        _MODULES[name] = module
    return _MODULES[name]


# --- version gates ---------------------------------------------------------


def model_opset(model):
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    return 0


def require_onnx_support(model):
    """Skip when the installed onnx cannot know this model's IR or opset."""
    import onnx
    import onnx.defs

    if model.ir_version > onnx.IR_VERSION:
        raise skip(
            "IR version %d > max %d of onnx %s"
            % (model.ir_version, onnx.IR_VERSION, onnx.__version__)
        )
    opset = model_opset(model)
    if opset > onnx.defs.onnx_opset_version():
        raise skip(
            "opset %d > max %d of onnx %s"
            % (opset, onnx.defs.onnx_opset_version(), onnx.__version__)
        )


# --- comparison -------------------------------------------------------------


def compare_outputs(names, got, expected, rtol, atol):
    """Returns None when equal within tolerance, else a one-line description."""

    for name, actual in zip(names, got):
        if name not in expected:
            continue
        problem = compare_value(name, actual, expected[name], rtol, atol)
        if problem:
            return problem
    return None


def compare_value(name, actual, want, rtol, atol):
    """One output: a tensor, a sequence of tensors, or an optional (None when empty)."""
    import numpy as np

    if want is None or actual is None:
        if (want is None) != (actual is None):
            return "output %r is %s, expected %s" % (
                name,
                "empty" if actual is None else "present",
                "empty" if want is None else "present",
            )
        return None
    if isinstance(want, list):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(want):
            size = len(actual) if isinstance(actual, (list, tuple)) else "not a sequence"
            return "output %r has %s elements, expected %d" % (name, size, len(want))
        for index, (a, w) in enumerate(zip(actual, want)):
            problem = compare_value("%s[%d]" % (name, index), a, w, rtol, atol)
            if problem:
                return problem
        return None
    want = np.asarray(want)
    actual = np.asarray(actual)
    if want.dtype.kind in "OU" and actual.dtype.kind in "OU":  # strings, however stored
        want, actual = want.astype(object), actual.astype(object)
    if actual.shape != want.shape:
        return "output %r has shape %s, expected %s" % (name, list(actual.shape), list(want.shape))
    if actual.dtype != want.dtype:
        return "output %r has dtype %s, expected %s" % (name, actual.dtype, want.dtype)
    if actual.dtype.kind in "fc":
        close = np.isclose(actual, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = actual == want
    if not np.all(close):
        bad = np.argwhere(~close)
        index = tuple(int(i) for i in bad[0])
        return "output %r differs at %d of %d elements, first at %s: got %r, expected %r" % (
            name,
            len(bad),
            actual.size,
            list(index),
            plain(actual[index]),
            plain(want[index]),
        )
    return None


def plain(element):
    """A numpy scalar as a Python value; an object array's element (a str) as it is."""
    return element.item() if hasattr(element, "item") else element


def tensor_shape(type_proto):
    """[int | str | None] for a tensor type, or None when it has no shape."""
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None
    dims = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(dim.dim_value)
        elif dim.HasField("dim_param"):
            dims.append(dim.dim_param)
        else:
            dims.append(None)
    return dims


# --- the checks -------------------------------------------------------------


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


def check_reference(case):
    import onnx

    model = case.model
    require_onnx_support(model)
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        raise skip("onnx %s has no onnx.reference" % onnx.__version__) from None
    expected = case.expected
    if not expected:
        raise skip("case declares no expected outputs")
    with Phase("session"):
        evaluator = ReferenceEvaluator(model)
    names = [o.name for o in model.graph.output]
    with Phase("run"):
        got = evaluator.run(None, case.inputs)
    problem = compare_outputs(names, got, expected, case.spec["rtol"], case.spec["atol"])
    if problem:
        raise fail("compare", problem)
    return "outputs match %s" % oracle_name(case)


def ort_session(model_path, level, optimized_path=None):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = {
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[level]
    options.log_severity_level = 3
    if optimized_path:
        options.optimized_model_filepath = optimized_path
    return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


_ORT_LIMITS = []


def ort_limits():
    """(max IR version, max default-domain opset) this onnxruntime loads, probed once per
    process with one-node models: the runtime says what it supports, not its messages."""
    if not _ORT_LIMITS:
        import onnxruntime as ort
        from onnx import TensorProto, helper

        def loads(ir, opset):
            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
            graph = helper.make_graph(
                [helper.make_node("Add", ["x", "x"], ["y"])],
                "probe",
                [x],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
            )
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
            model.ir_version = ir
            options = ort.SessionOptions()
            options.log_severity_level = 4
            try:
                ort.InferenceSession(
                    model.SerializeToString(), options, providers=["CPUExecutionProvider"]
                )
                return True
            except Exception:
                return False

        max_ir = 7
        while max_ir < 64 and loads(max_ir + 1, 7):
            max_ir += 1
        max_opset = 7
        while max_opset < 128 and loads(max_ir, max_opset + 1):
            max_opset += 1
        _ORT_LIMITS.extend([max_ir, max_opset])
    return _ORT_LIMITS[0], _ORT_LIMITS[1]


def beyond_ort(model):
    """Why onnxruntime cannot load this model by design (too new), or None."""
    import onnxruntime as ort

    max_ir, max_opset = ort_limits()
    if model.ir_version > max_ir:
        return "IR version %d > max %d of onnxruntime %s" % (
            model.ir_version,
            max_ir,
            ort.__version__,
        )
    opset = model_opset(model)
    if opset > max_opset:
        return "opset %d > max %d of onnxruntime %s" % (opset, max_opset, ort.__version__)
    return None


def open_session(case, level, optimized_path=None):
    """A session for the case's model; `skip` when the model is newer than this
    onnxruntime supports, `error@session@level` for any other refusal."""
    try:
        return ort_session(case.model_path, level, optimized_path)
    except Exception as exc:
        trace = traceback.format_exc()
        reason = beyond_ort(case.model)
        if reason:
            raise skip(reason) from None
        raise Verdict("error", "session@" + level, one_line(exc), trace) from None


def oracle_name(case):
    if case.spec.get("oracle") == "onnxruntime":
        return "onnxruntime's with optimizations disabled"
    return "the oracle"


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


def _expected_violations(case, unobservable):
    return sorted(k for k in case.spec.get("violations", []) if k.split(":")[0] not in unobservable)


def check_annotations(case):
    """The case's declared annotations hold (or are violated exactly as declared) on real runs."""
    ann = sibling("annotations")
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
            verdict = ann.check_run(model, feeds, runtime)
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

    ann = sibling("annotations")
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
        verdict = ann.check_run(inferred, feeds, "ort")
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

    ann = sibling("annotations")
    notes = []
    for index, feeds in enumerate(case.runs):
        ours = ann.check_run(model, feeds, "reference")
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
    folder = tempfile.mkdtemp(prefix="compat-conv-")
    path = os.path.join(folder, "converted.onnx")
    onnx.save(converted, path)
    try:
        session = ort_session(path, "disabled")
        got = session.run(None, case.inputs)
    except Exception as exc:
        text = "the checker accepts the converted model, onnxruntime does not: " + one_line(exc)
        raise fail("run", text) from None
    problem = compare_outputs(names, got, expected, case.spec["rtol"], case.spec["atol"])
    if problem:
        text = "converted to opset %d, the model computes something else: %s" % (target, problem)
        raise fail("compare", text)
    return "converted to opset %d: valid, same outputs in onnxruntime" % target


BUILTIN = {
    "checker": check_checker,
    "shape_inference": check_shape_inference,
    "reference": check_reference,
    "ort_run": check_ort_run,
    "ort_optimized": check_ort_optimized,
    "annotations": check_annotations,
    "inferred_annotations": check_inferred_annotations,
    "annotations_builtin": check_annotations_builtin,
    "version_converter": check_version_converter,
}


def find_check(case, name):
    if name in BUILTIN:
        return BUILTIN[name]
    custom = case.spec.get("custom_checks", {}).get(name)
    if custom is None:
        raise Verdict("error", "load", "unknown check %r for case %r" % (name, case.spec.get("id")))
    spec = importlib.util.spec_from_file_location(
        "compat_custom_%d" % abs(hash(custom["file"])), custom["file"]
    )
    module = importlib.util.module_from_spec(spec)
    with Phase("load"):
        spec.loader.exec_module(module)
    return getattr(module, custom["function"])


# --- the loop ----------------------------------------------------------------


def run_task(cases, task):
    started = time.perf_counter()
    outcome, phase, detail, trace = "pass", "", "", ""
    try:
        case = cases.get(task["case_dir"])
        if case is None:
            case = cases[task["case_dir"]] = CaseData(task["case_dir"])
        detail = find_check(case, task["check"])(case) or ""
    except Verdict as verdict:
        outcome, phase, detail, trace = (
            verdict.outcome,
            verdict.phase,
            verdict.detail,
            verdict.trace,
        )
    except AssertionError as exc:  # a case-specific check's way of saying "fail"
        outcome, phase, detail = "fail", "check", str(exc) or "assertion failed"
        trace = traceback.format_exc()
    except Exception as exc:  # a check's own bug, or an API missing in this release
        outcome, phase, detail = "error", "check", one_line(exc)
        trace = traceback.format_exc()
    return {
        "case": task["case"],
        "check": task["check"],
        "outcome": outcome,
        "phase": phase,
        "detail": detail,
        "seconds": round(time.perf_counter() - started, 4),
        "traceback": trace,
    }


PROBE_MODULES = ("onnx", "onnxruntime", "numpy", "google.protobuf")


def probe():
    """Proves the environment really works: imports, then runs a one-node model.

    A mere import is not enough: onnxruntime < 1.18.1 under numpy 2 imports
    with a warning and fails only when it first touches an array.
    """
    import platform

    import numpy as np
    import onnx
    import onnxruntime as ort
    from google import protobuf
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "probe", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    (out,) = session.run(None, {"x": np.array([1.0, -2.0], dtype=np.float32)})
    if out.tolist() != [-1.0, 2.0]:
        raise RuntimeError("onnxruntime computed Neg([1, -2]) = %r" % (out.tolist(),))
    print(
        json.dumps(
            {
                "packages": {
                    "onnx": onnx.__version__,
                    "onnxruntime": ort.__version__,
                    "numpy": np.__version__,
                    "protobuf": protobuf.__version__,
                },
                "python": platform.python_version(),
                "platform": platform.platform(),
            },
            sort_keys=True,
        )
    )
    return 0


def main(argv):
    if argv == ["--probe"]:
        return probe()
    faulthandler.enable()  # a segfault leaves "Fatal Python error" and a stack in the log
    plan_path, results_path, start = argv[0], argv[1], int(argv[2])
    with open(plan_path) as f:
        tasks = json.load(f)["tasks"]
    try:
        import onnxruntime

        onnxruntime.set_default_logger_severity(3)
    except Exception:
        pass
    cases = {}
    with open(results_path, "a") as out:
        for index in range(start, len(tasks)):
            record = run_task(cases, tasks[index])
            record["index"] = index
            out.write(json.dumps(record, sort_keys=True) + "\n")
            out.flush()  # the OS keeps it even if this process dies next
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
