"""A plain-venv oracle for the real-model fixtures: what one onnx + onnxruntime
install does with each model, computed without the project.

    uv venv -p 3.11 /tmp/or16
    uv pip install --python /tmp/or16/bin/python onnx==1.16.2 onnxruntime==1.17.3 "numpy<2"
    uv venv -p 3.11 /tmp/or23
    uv pip install --python /tmp/or23/bin/python onnx==1.23.2 onnxruntime==1.24.4 numpy
    python tests/data/real_models/oracle.py --python /tmp/or16/bin/python > facts16.json
    python tests/data/real_models/oracle.py --python /tmp/or23/bin/python > facts23.json

runs this same file under that interpreter (which needs only onnx, onnxruntime
and numpy; the project is never imported) once per model, and prints one JSON
object::

    {"versions": {"python": ..., "onnx": ..., "onnxruntime": ..., "numpy": ..., "protobuf": ...},
     "ort_max_ir_version": 9,
     "models": {"skl_logreg_zipmap": {
         "ir_version": 10, "opset_import": [["", 9], ["ai.onnx.ml", 1]],
         "checker":         {"ok": true} | {"ok": false, "error": "ValidationError: ..."},
         "shape_inference": {...},   # infer_shapes(model, strict_mode=True)
         "ort_load":        {...},   # InferenceSession(path, CPUExecutionProvider)
         "ort_run":         {...},   # session.run(None, the .npz inputs)
         "reference_run":   {...},   # ReferenceEvaluator(model).run(None, inputs)
         "reference_matches_ort": {"ok": ...} | null   # null: one of the two did not run
     }, ...}}

Each fact is ``{"ok": true}`` or ``{"ok": false, "error": "<ExceptionType>: <the
message on one line>"}`` (onnxruntime's C++ source location and long bracketed
lists cut out, at most 300 characters). Outputs match when every output
has the same shape and, for numbers, agrees within rtol 1e-4 / atol 1e-5 (strings
and integers exactly; a sequence of maps element by element, key by key).

Without ``--python`` it runs in the current interpreter. ``--models DIR`` picks
another directory of ``*.onnx`` + ``*.npz`` (default: this file's directory).
A model whose inner run crashes or times out gets ``{"crash": "..."}``.
What it printed for the two venvs above is kept in ``oracle_observed.json``
and tabulated in ``ORACLE.md``.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

RTOL = 1e-4
ATOL = 1e-5
HERE = Path(__file__).resolve().parent


def _error(exc):
    """'<ExceptionType>: <message on one line>', at most 300 characters of message.

    onnxruntime's source location and C++ signature ("/onnxruntime_src/...
    model.cc:179 onnxruntime::Model::Model(...) ") and long bracketed lists
    (the reference evaluator's "known results [...]") are cut out.
    """
    import re

    text = " ".join(str(exc).split())
    text = re.sub(
        r"(?:\b[A-Za-z]:)?[\\/][^\s:]*\.(?:cc|cpp|h):\d+ [\w:~<>]+(?:\([^()]*\))? ?", " ", text
    )
    text = " ".join(text.split())
    text = re.sub(r"\[[^\[\]]{100,}\]", "[...]", text)
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}"


def _attempt(fn):
    try:
        return {"ok": True}, fn()
    except Exception as exc:  # the oracle records every failure, whatever its type
        return {"ok": False, "error": _error(exc)}, None


def _compare(name, got, want):
    """None when got matches want, else one line saying how they differ."""
    import numpy as np

    if isinstance(want, list) or isinstance(got, list):
        if not (isinstance(want, list) and isinstance(got, list)):
            return f"{name}: {type(got).__name__} vs {type(want).__name__}"
        if len(got) != len(want):
            return f"{name}: {len(got)} elements vs {len(want)}"
        for i in range(len(want)):
            problem = _compare(f"{name}[{i}]", got[i], want[i])
            if problem:
                return problem
        return None
    if isinstance(want, dict) or isinstance(got, dict):
        if not (isinstance(want, dict) and isinstance(got, dict)):
            return f"{name}: {type(got).__name__} vs {type(want).__name__}"
        if sorted(got) != sorted(want):
            return f"{name}: keys {sorted(got)} vs {sorted(want)}"
        for key in sorted(want):
            problem = _compare(f"{name}[{key!r}]", got[key], want[key])
            if problem:
                return problem
        return None
    if got is None:
        return f"{name}: missing (None) in the reference evaluator's outputs"
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return f"{name}: shape {list(g.shape)} vs onnxruntime's {list(w.shape)}"
    if w.dtype.kind in "OUS" or g.dtype.kind in "OUS":
        if not np.array_equal(g.astype(str), w.astype(str)):
            return f"{name}: strings differ"
        return None
    if w.dtype.kind in "iub" and g.dtype.kind in "iub":
        if not np.array_equal(g, w):
            return f"{name}: integers differ"
        return None
    if not np.allclose(
        g.astype(np.float64), w.astype(np.float64), rtol=RTOL, atol=ATOL, equal_nan=True
    ):
        diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
        return f"{name}: max abs diff {float(np.nanmax(diff)):.3g}"
    return None


def inner_model(path):
    import numpy as np
    import onnx
    import onnx.checker
    import onnx.shape_inference
    import onnxruntime as ort

    path = Path(path).resolve()
    os.chdir(path.parent)
    model = onnx.load(str(path))
    npz = path.with_suffix(".npz")
    with np.load(npz, allow_pickle=False) as data:
        feeds = {k: data[k] for k in data.files}
    facts = {
        "ir_version": model.ir_version,
        "opset_import": [[o.domain, o.version] for o in model.opset_import],
    }
    facts["checker"], _ = _attempt(lambda: onnx.checker.check_model(model, full_check=True))
    facts["shape_inference"], _ = _attempt(
        lambda: onnx.shape_inference.infer_shapes(model, strict_mode=True)
    )

    def load():
        options = ort.SessionOptions()
        options.log_severity_level = 3
        # By file name from the model's directory: the message names no local path.
        return ort.InferenceSession(path.name, options, providers=["CPUExecutionProvider"])

    facts["ort_load"], session = _attempt(load)
    expected = None
    if session is not None:
        facts["ort_run"], expected = _attempt(lambda: session.run(None, feeds))
    else:
        facts["ort_run"] = {"ok": False, "error": "not run: the session did not load"}

    def reference():
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(model).run(None, feeds)

    facts["reference_run"], got = _attempt(reference)
    if got is None or expected is None:
        facts["reference_matches_ort"] = None
    else:
        names = [o.name for o in model.graph.output]
        problem = None
        if len(got) != len(expected):
            problem = f"{len(got)} outputs vs onnxruntime's {len(expected)}"
        for i in range(min(len(names), len(got), len(expected))):
            problem = problem or _compare(names[i], got[i], expected[i])
        facts["reference_matches_ort"] = (
            {"ok": True} if problem is None else {"ok": False, "error": problem}
        )
    return facts


def inner_max_ir():
    """The highest IR version this onnxruntime loads: a one-Identity model, IR 7..15."""
    import onnx
    import onnx.helper as oh
    import onnxruntime as ort

    graph = oh.make_graph(
        [oh.make_node("Identity", ["x"], ["y"])],
        "g",
        [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
        [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])],
    )
    best = None
    for ir in range(7, 16):
        model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)])
        model.ir_version = ir
        options = ort.SessionOptions()
        options.log_severity_level = 4
        try:
            ort.InferenceSession(
                model.SerializeToString(), options, providers=["CPUExecutionProvider"]
            )
        except Exception:
            break
        best = ir
    return best


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
    try:
        proc = subprocess.run(
            [python, str(Path(__file__).resolve()), "--inner", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"crash": f"timeout after {timeout}s"}
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return {"crash": f"exit {proc.returncode}: {tail[:300]}"}
    return json.loads(proc.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--python", default=sys.executable, help="the venv's interpreter (default: this one)"
    )
    parser.add_argument("--models", default=str(HERE), help="directory of *.onnx + *.npz")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per model")
    parser.add_argument("--inner", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        what = args.inner[0]
        if what == "versions":
            out = inner_versions()
        elif what == "max-ir":
            out = inner_max_ir()
        else:
            out = inner_model(what)
        json.dump(out, sys.stdout)
        return
    models = sorted(Path(args.models).resolve().glob("*.onnx"))
    result = {
        "versions": _run_inner(args.python, ["versions"], args.timeout),
        "ort_max_ir_version": _run_inner(args.python, ["max-ir"], args.timeout),
        "models": {f.stem: _run_inner(args.python, [str(f)], args.timeout) for f in models},
    }
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
