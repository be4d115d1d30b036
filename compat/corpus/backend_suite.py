"""The `onnx_backend` case source: ONNX's own backend node tests as a corpus.

The host generates the suite once per run with its pinned onnx
(`onnx.backend.test.case.node.collect_testcases`, about 1,900 models with inputs,
expected outputs and tolerances), and hands the models and data to the cells like
any other case, as backend-test protobuf files, so every cell reads identical bytes.
The generator's onnx version is part of the run's identity (`generator_onnx`).
"""

from __future__ import annotations

import warnings

import onnx

from compat.core.case import Case
from compat.core.suite import CHECKS, DESCRIPTION, FAMILY


def _op_type(model: onnx.ModelProto) -> str:
    ops = [n.op_type for n in model.graph.node]
    return ops[0] if len(ops) == 1 else (ops[0] if ops else "?")


def backend_cases() -> tuple[str, str, list[Case]]:
    """(family id, description, cases): one case per backend node test."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own numpy overflow warnings
        tests = collect_testcases(None)
    by_name = {t.name: t for t in tests}
    cases = []
    for test in tests:
        if test.model is None or not test.data_sets:
            continue
        # An `_expanded` test runs a function's decomposition: file it under the op
        # its unexpanded twin tests, so the per-op table counts both.
        base = test.name.split("_expanded")[0]
        twin = by_name.get(base)
        op = (
            _op_type(twin.model)
            if twin is not None and twin.model is not None
            else _op_type(test.model)
        )
        inputs, outputs = test.data_sets[0]
        graph = test.model.graph
        cases.append(
            Case(
                id=f"{FAMILY}.{test.name}",
                description=f"{op} ({test.name}, from onnx {onnx.__version__})",
                model=test.model,
                inputs={i.name: v for i, v in zip(graph.input, inputs, strict=False)},
                expected={o.name: v for o, v in zip(graph.output, outputs, strict=False)},
                builtin_checks=CHECKS,
                encoding="pb",
                ort_levels=("all",),
                tags=(op,),
                rtol=float(test.rtol),
                atol=float(test.atol),
            )
        )
    return FAMILY, DESCRIPTION, cases
