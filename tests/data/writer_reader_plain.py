"""The writer × reader question asked without onnx-compat, in a plain venv: does this
venv's onnxruntime load what this venv's onnx writes by default? Prints one JSON line."""

import json

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "plain", [x], [y])
model = helper.make_model(graph)
try:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": np.array([-1.0, 0.0, 2.0], dtype=np.float32)})[0].tolist()
    loads = got == [0.0, 0.0, 2.0]
except Exception:
    loads = False
print(json.dumps({"onnx": onnx.__version__, "onnxruntime": ort.__version__, "loads": loads}))
