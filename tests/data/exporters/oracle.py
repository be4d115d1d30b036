"""Plain-venv ground truth for the exporters' models: what one onnx + onnxruntime install
does with each model, computed without the project (issue #22).

    uv venv -p 3.11 /tmp/plain-1.20.1
    uv pip install --python /tmp/plain-1.20.1/bin/python onnx==1.20.1 onnxruntime==1.24.4 numpy
    python tests/data/exporters/make_models.py --out /tmp/exporters
    python tests/data/exporters/oracle.py --python /tmp/plain-1.20.1/bin/python \\
        --models /tmp/exporters > facts-1.20.1.json

(for onnxruntime < 1.18.1 install ``numpy<2``). Each model is judged in child processes
of that interpreter, which imports only onnx, onnxruntime and numpy; prints one JSON
object ``{"versions": {...}, "models": {NAME: FACTS}}`` where FACTS holds:

- ``checker``: ``onnx.checker.check_model(model, full_check=False)``;
  ``checker_full``: the same with ``full_check=True`` (which adds strict shape inference)
- ``shape_inference``: ``onnx.shape_inference.infer_shapes(model, strict_mode=True)``
- ``ort_load`` / ``ort_run``: ``InferenceSession`` (CPU, one thread) at every graph
  optimization level, ``run(None, npz inputs)``; ``ort_levels_agree``: every level's
  outputs equal level ``disabled``'s within rtol 1e-4 / atol 1e-5 (the tolerance the
  project gives a drop-in; compared as ``compat/cell/compare.py`` does: shape, dtype,
  ``numpy.isclose``); ``ort_seconds`` per level; ``ort_warnings``: onnxruntime's own
  warnings on the run (e.g. "Expected shape from model of {1,-1} does not match ...")
- ``reference_run``: ``onnx.reference.ReferenceEvaluator(model).run(None, inputs)`` in a
  child of its own, killed after ``--reference-timeout`` seconds (default 120):
  ``{"ok": false, "did_not_finish": true}``; ``reference_seconds``;
  ``reference_matches_ort``: the same comparison against onnxruntime's ``disabled`` level
- ``outputs``: each graph output's declared and actual shape
- ``annotations``: the seed's run-time semantics on onnxruntime's run (level
  ``disabled``, every annotated top-level value made an extra output): one binding map,
  the graph inputs bind first, then values in node order; a dim_value must equal the
  axis, a dim_param binds on first sight and must equal afterwards, the rank must
  match, the element type too; no shape field = nothing declared; a negative dim_value
  is read as unknown (as onnxruntime does) and listed in ``nonstandard``. When a name
  carries two annotations (a graph output and a value_info entry), both are judged.
  ``{"annotated": N, "observed": N, "violations": [...], "output_violations": [...]}``

Each fact is ``{"ok": true}`` or ``{"ok": false, "error": "<Type>: <message>"}``.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RTOL = 1e-4
ATOL = 1e-5
LEVELS = ("disabled", "basic", "extended", "all")


def _error(exc):
    text = " ".join(str(exc).split())
    text = re.sub(
        r"(?:\b[A-Za-z]:)?[\\/][^\s:]*\.(?:cc|cpp|h):\d+ [\w:~<>]+(?:\([^()]*\))? ?", " ", text
    )
    text = re.sub(r"\[[^\[\]]{100,}\]", "[...]", " ".join(text.split()))
    return "{}: {}".format(type(exc).__name__, text[:297] + "..." if len(text) > 300 else text)


def _attempt(fn):
    try:
        return {"ok": True}, fn()
    except Exception as exc:  # every failure is a fact
        return {"ok": False, "error": _error(exc)}, None


def compare(name, actual, want):
    """None when equal within the drop-in tolerance, else one line (compat's compare rules)."""
    import numpy as np

    if actual is None or want is None:
        return None if actual is None and want is None else f"{name}: one side is empty"
    actual, want = np.asarray(actual), np.asarray(want)
    if actual.shape != want.shape:
        return f"{name}: shape {list(actual.shape)} vs {list(want.shape)}"
    if actual.dtype != want.dtype:
        return f"{name}: dtype {actual.dtype} vs {want.dtype}"
    if actual.dtype.kind in "fc":
        close = np.isclose(actual, want, rtol=RTOL, atol=ATOL, equal_nan=True)
    else:
        close = actual == want
    if not np.all(close):
        diff = np.abs(actual.astype(np.float64) - want.astype(np.float64))
        bad, worst = int((~close).sum()), float(np.nanmax(diff))
        return f"{name}: {bad} of {actual.size} elements differ, max abs diff {worst:.3g}"
    return None


def _feeds(path):
    import numpy as np

    with np.load(str(path.with_suffix(".npz")), allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _session(source, level, ort, severity=3):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = severity
    options.graph_optimization_level = {
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[level]
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def _dims(type_proto):
    """None without a shape field, else [int | str | None] (negative dim_value → None)."""
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None
    out = []
    for dim in tensor.shape.dim:
        which = dim.WhichOneof("value")
        if which == "dim_value":
            out.append(dim.dim_value if dim.dim_value >= 0 else None)
        elif which == "dim_param":
            out.append(dim.dim_param)
        else:
            out.append(None)
    return out


def _declared_text(type_proto):
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None
    return [
        d.dim_value if d.WhichOneof("value") == "dim_value" else (d.dim_param or "?")
        for d in tensor.shape.dim
    ]


def judge(model, feeds, values):
    """The seed's semantics over (name, declaring ValueInfoProto, actual array) triples."""
    import numpy as np
    from onnx import helper

    sizes, origin, violations = {}, {}, []

    def check(name, info, array, role):
        dims = _dims(info.type)
        elem = info.type.tensor_type.elem_type
        declared_dtype = helper.tensor_dtype_to_np_dtype(elem) if elem else None
        actual_dtype = np.asarray(array).dtype
        if declared_dtype is not None and actual_dtype != declared_dtype:
            violations.append(f"{role} {name}: dtype {actual_dtype}, declared {declared_dtype}")
        if dims is None:
            return
        shape = list(np.asarray(array).shape)
        if len(dims) != len(shape):
            declared = _declared_text(info.type)
            violations.append(
                f"{role} {name}: rank {len(shape)} {shape}, declared rank {len(dims)} {declared}"
            )
            return
        for axis, (want, got) in enumerate(zip(dims, shape, strict=True)):
            if isinstance(want, int) and want != got:
                violations.append(f"{role} {name} axis {axis}: {got}, declared {want}")
            elif isinstance(want, str):
                if want not in sizes:
                    sizes[want], origin[want] = got, f"{name} axis {axis}"
                elif sizes[want] != got:
                    violations.append(
                        f"{role} {name} axis {axis}: {got}, declared {want} = {sizes[want]} "
                        f"(bound by {origin[want]})"
                    )

    for info in model.graph.input:
        if info.name in feeds:
            check(info.name, info, feeds[info.name], "input")
    for name, info, array, role in values:
        check(name, info, array, role)
    return violations


def inner_model(path, outputs_file):
    import numpy as np
    import onnx
    import onnx.checker
    import onnx.shape_inference
    import onnxruntime as ort

    path = Path(path).resolve()
    os.chdir(str(path.parent))
    model = onnx.load(str(path))
    feeds = _feeds(path)
    facts = {
        "ir_version": model.ir_version,
        "opset_import": [[o.domain, o.version] for o in model.opset_import],
    }
    facts["checker"], _ = _attempt(lambda: onnx.checker.check_model(model, full_check=False))
    facts["checker_full"], _ = _attempt(lambda: onnx.checker.check_model(model, full_check=True))
    facts["shape_inference"], _ = _attempt(
        lambda: onnx.shape_inference.infer_shapes(model, strict_mode=True)
    )
    names = [o.name for o in model.graph.output]
    results, seconds, load_error = {}, {}, None
    for level in LEVELS:
        fact, session = _attempt(lambda level=level: _session(path.name, level, ort, 2))
        if session is None:
            load_error = load_error or fact
            continue
        start = time.perf_counter()
        fact, got = _attempt(lambda session=session: session.run(None, feeds))
        seconds[level] = round(time.perf_counter() - start, 3)
        results[level] = got if got is not None else fact
    facts["ort_load"] = load_error or {"ok": True}
    run_errors = [v for v in results.values() if isinstance(v, dict)]
    if run_errors:
        facts["ort_run"] = run_errors[0]
    elif results:
        facts["ort_run"] = {"ok": True}
    else:
        facts["ort_run"] = {"ok": False, "error": "not run: no session loaded"}
    facts["ort_seconds"] = seconds
    base = results.get("disabled")
    if facts["ort_run"]["ok"] and len(results) == len(LEVELS):
        problems = []
        for level in LEVELS[1:]:
            for i, name in enumerate(names):
                problem = compare(name, results[level][i], base[i])
                if problem:
                    problems.append(f"{level}: {problem}")
        facts["ort_levels_agree"] = {"ok": not problems}
        if problems:
            facts["ort_levels_agree"]["error"] = "; ".join(problems)[:600]
        np.savez(outputs_file, **{f"o{i}": a for i, a in enumerate(base)})
        facts["outputs"] = {
            o.name: {"declared": _declared_text(o.type), "actual": list(np.asarray(a).shape)}
            for o, a in zip(model.graph.output, base, strict=True)
        }
        facts["annotations"] = _annotations(model, feeds, path, ort)
    else:
        facts["ort_levels_agree"] = None
    return facts


def _annotations(model, feeds, path, ort):
    """Every annotated top-level value observed on onnxruntime's run (level disabled)."""
    import onnx

    graph = model.graph
    annotated = {}  # name -> [(info, role)]
    for info in graph.value_info:
        annotated.setdefault(info.name, []).append((info, "value_info"))
    for info in graph.output:
        annotated.setdefault(info.name, []).append((info, "output"))
    extended = onnx.ModelProto()
    extended.CopyFrom(model)
    present = {o.name for o in extended.graph.output}
    produced = {n for node in graph.node for n in node.output}
    for name in annotated:
        if name not in present and name in produced:
            extended.graph.output.add().name = name  # no type: onnxruntime reports it as it is
    folder = tempfile.mkdtemp(prefix="exporters-oracle-")
    extended_path = str(Path(folder) / "extended.onnx")
    onnx.save(extended, extended_path)
    session = _session(extended_path, "disabled", ort)
    out_names = [o.name for o in session.get_outputs()]
    got = dict(zip(out_names, session.run(None, feeds), strict=True))
    order = [n for node in graph.node for n in node.output]
    values = [
        (name, info, got[name], role)
        for name in order
        if name in annotated and name in got
        for info, role in annotated[name]
    ]
    violations = judge(model, feeds, values)
    negative = [
        f"{i.name} axis {k}"
        for i in list(graph.input) + list(graph.output)
        for k, d in enumerate(i.type.tensor_type.shape.dim)
        if d.WhichOneof("value") == "dim_value" and d.dim_value < 0
    ]
    return {
        "annotated": sum(len(v) for v in annotated.values()),
        "observed": len(values),
        "violations": violations[:20],
        "violation_count": len(violations),
        "output_violations": [v for v in violations if v.startswith("output ")][:5],
        "nonstandard": negative,
    }


def inner_reference(path, outputs_file):
    import numpy as np
    import onnx
    from onnx.reference import ReferenceEvaluator

    path = Path(path).resolve()
    os.chdir(str(path.parent))
    model = onnx.load(str(path))
    feeds = _feeds(path)
    start = time.perf_counter()
    fact, got = _attempt(lambda: ReferenceEvaluator(model).run(None, feeds))
    facts = {"reference_run": fact, "reference_seconds": round(time.perf_counter() - start, 2)}
    if got is None or not Path(outputs_file).exists():
        facts["reference_matches_ort"] = None
        return facts
    with np.load(outputs_file) as data:
        want = [data[f"o{i}"] for i in range(len(data.files))]
    problem = None if len(got) == len(want) else f"{len(got)} outputs vs {len(want)}"
    for output, actual, expected in zip(model.graph.output, got, want, strict=False):
        problem = problem or compare(output.name, actual, expected)
    facts["reference_matches_ort"] = {"ok": problem is None}
    if problem:
        facts["reference_matches_ort"]["error"] = problem
    return facts


def inner_versions():
    import platform

    import google.protobuf
    import numpy
    import onnx
    import onnxruntime

    return {
        "python": platform.python_version(),
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
        "numpy": numpy.__version__,
        "protobuf": google.protobuf.__version__,
    }


def _run_inner(python, args, timeout):
    """(JSON result or None, stderr, seconds, timed out)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [python, str(Path(__file__).resolve()), "--inner", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, "", round(time.perf_counter() - start, 1), True
    elapsed = round(time.perf_counter() - start, 1)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return {"crash": f"exit {proc.returncode}: {tail[:300]}"}, proc.stderr, elapsed, False
    return json.loads(proc.stdout), proc.stderr, elapsed, False


def judge_model(python, path, reference_timeout):
    outputs_file = str(Path(tempfile.mkdtemp(prefix="exporters-oracle-")) / "ort.npz")
    facts, stderr, _, timed_out = _run_inner(python, ["model", str(path), outputs_file], 900)
    if timed_out:
        return {"crash": "the checks and onnxruntime runs took more than 900 s"}
    if "crash" in facts:
        return facts
    facts["ort_warnings"] = sorted(
        {
            re.sub(r"^.*?\] ", "", line).strip()[:300]
            for line in stderr.splitlines()
            if "W:onnxruntime" in line or "does not match actual shape" in line
        }
    )
    ref, _, elapsed, timed_out = _run_inner(
        python, ["reference", str(path), outputs_file], reference_timeout
    )
    if timed_out:
        facts["reference_run"] = {
            "ok": False,
            "did_not_finish": True,
            "error": f"did not finish in {reference_timeout} s",
        }
        facts["reference_seconds"] = None
        facts["reference_matches_ort"] = None
    elif "crash" in ref:
        facts["reference_run"] = {"ok": False, "error": ref["crash"]}
        facts["reference_seconds"] = elapsed
        facts["reference_matches_ort"] = None
    else:
        facts.update(ref)
    return facts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the plain venv's interpreter")
    parser.add_argument("--models", help="directory of *.onnx + *.npz")
    parser.add_argument("--only", default="*", help="a glob on model names")
    parser.add_argument("--reference-timeout", type=int, default=120, help="seconds")
    parser.add_argument("--inner", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        what = args.inner[0]
        if what == "versions":
            out = inner_versions()
        elif what == "model":
            out = inner_model(args.inner[1], args.inner[2])
        else:
            out = inner_reference(args.inner[1], args.inner[2])
        json.dump(out, sys.stdout)
        return
    if not args.models:
        parser.error("give --models DIR")
    models = sorted(Path(args.models).resolve().glob(args.only + ".onnx"))
    versions, _, _, _ = _run_inner(args.python, ["versions"], 300)
    result = {"versions": versions, "reference_timeout": args.reference_timeout, "models": {}}
    for path in models:
        print(f"oracle: {path.stem} ...", file=sys.stderr, flush=True)
        result["models"][path.stem] = judge_model(args.python, path, args.reference_timeout)
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
