"""Writes nchwc_conv.onnx and nchwc_conv.npz: one 3x3 Conv, 64 to 64 channels on a
16x16 image, whose outputs at onnxruntime's optimization level `all` differ from level
`disabled` by about 1e-4, because of one optimizer: NchwcTransformer.

At level `all` onnxruntime (on x86-64 with AVX2 or AVX-512, where MLAS has NCHWc
kernels) rewrites the Conv into its blocked NCHWc layout (com.microsoft
ReorderInput -> Conv -> ReorderOutput); the blocked kernel sums the 576 products of each
output in another order than the im2col + SGEMM path of `disabled`, so float32
rounding differs. The weights are scaled so the outputs reach ~100: the difference is
up to ~1e-4 absolute, beyond the default drop-in tolerance (rtol 1e-4, atol 1e-5) for
the outputs near 0, and within rtol = atol = 1e-3 everywhere.
Disabling NchwcTransformer alone (`disabled_optimizers=["NchwcTransformer"]`) makes the
outputs identical. The transformer:
https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/optimizer/nchwc_transformer.cc
(added in https://github.com/microsoft/onnxruntime/pull/1327), registered at Level3 in
graph_transformer_utils.cc when `MlasNchwcGetBlockSize() > 1`; `disabled_optimizers`
came with https://github.com/microsoft/onnxruntime/pull/7126.

Run it to write the files (python make_nchwc_conv.py) and, with `--measure`, to print
the differences the installed onnxruntime computes. Measured on an AMD EPYC (AVX-512),
2026-12-02, onnxruntime 1.15.1, 1.17.3, 1.20.1, 1.24.4 and 1.32.0 alike: level `all`
differs by 8.39e-05 at most, 16 of 16384 elements beyond the default tolerance, none
beyond 1e-3; `basic` and `extended` are identical to `disabled`; `all` without
NchwcTransformer is identical.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = Path(__file__).resolve().parent
CHANNELS, SIZE, SCALE = 64, 16, 60.0


def model_and_inputs():
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((CHANNELS, CHANNELS, 3, 3)) * SCALE / np.sqrt(CHANNELS * 9)
    bias = rng.standard_normal(CHANNELS)
    x = rng.standard_normal((1, CHANNELS, SIZE, SIZE)).astype(np.float32)
    shape = [1, CHANNELS, SIZE, SIZE]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W", "B"], ["y"], pads=[1, 1, 1, 1])],
        "nchwc_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [
            numpy_helper.from_array(weight.astype(np.float32), "W"),
            numpy_helper.from_array(bias.astype(np.float32), "B"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # every onnxruntime of the matrix reads it
    return model, {"x": x}


def measure(model, feeds) -> None:
    import onnxruntime as ort

    levels = {
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }

    def run(level, disabled=()):
        options = ort.SessionOptions()
        options.graph_optimization_level = levels[level]
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(
            model.SerializeToString(),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(disabled),
        )
        return session.run(None, feeds)[0]

    base = run("disabled")
    tried = [(level, ()) for level in levels if level != "disabled"]
    for level, disabled in [*tried, ("all", ("NchwcTransformer",))]:
        got = run(level, disabled)
        beyond = int(np.sum(~np.isclose(got, base, rtol=1e-4, atol=1e-5)))
        loose = int(np.sum(~np.isclose(got, base, rtol=1e-3, atol=1e-3)))
        without = f" without {disabled[0]}" if disabled else ""
        print(
            f"onnxruntime {ort.__version__} {level}{without}: largest difference "
            f"{np.abs(got - base).max():.3g}, {beyond} of {got.size} beyond rtol 1e-4/atol "
            f"1e-5, {loose} beyond 1e-3"
        )


if __name__ == "__main__":
    model, feeds = model_and_inputs()
    save(model, str(HERE / "nchwc_conv.onnx"))
    np.savez(HERE / "nchwc_conv.npz", **feeds)
    if "--measure" in sys.argv:
        measure(model, feeds)
