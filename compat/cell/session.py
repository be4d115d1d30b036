"""onnxruntime sessions at an optimization level, and the limits this release loads."""

from __future__ import annotations

import traceback
from typing import Tuple

from compat.cell.gates import model_opset
from compat.cell.verdict import Verdict, beyond, one_line

ORT_LEVELS = ("disabled", "basic", "extended", "all")


def session_options():
    """One thread per session: the matrix already runs a worker per core, and a session
    that starts no thread pool is created several times faster (most of a check's time)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return options


def ort_session(model_path, level, optimized_path=None, disabled=()):
    """A session at `level`; `disabled`: the optimizers (graph transformers and rewrite
    rules, by name) it leaves out, as `InferenceSession(..., disabled_optimizers=...)`."""
    import onnxruntime as ort

    options = session_options()
    options.graph_optimization_level = {
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[level]
    options.log_severity_level = 3
    if optimized_path:
        options.optimized_model_filepath = optimized_path
    if disabled:
        return ort.InferenceSession(
            model_path,
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(disabled),
        )
    return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


_ORT_LIMITS = []  # type: list[int]


def ort_limits() -> Tuple[int, int]:
    """(max IR version, max default-domain opset) this onnxruntime loads, probed with
    one-node models (the runtime says what it supports, not its messages): once per
    environment by `probe`, which the host hands to every worker (`set_limits`)."""
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
            options = session_options()
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


def set_limits(limits):
    """The limits the environment's probe measured: no worker probes them again."""
    if limits and not _ORT_LIMITS:
        _ORT_LIMITS.extend(int(x) for x in limits[:2])


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


def open_session(case, level, optimized_path=None, disabled=()):
    """A session for the case's model; `skip` when the model is newer than this
    onnxruntime supports, `error@session@level` for any other refusal."""
    try:
        return ort_session(case.model_path, level, optimized_path, disabled)
    except Exception as exc:
        trace = traceback.format_exc()
        reason = beyond_ort(case.model)
        if reason:
            raise beyond(reason) from None
        raise Verdict("error", "session@" + level, one_line(exc), trace) from None


def oracle_name(case):
    if case.spec.get("oracle") == "onnxruntime":
        return "onnxruntime's with optimizations disabled"
    return "the oracle"
