# onnx's reference evaluator next to onnxruntime on the minimal model
import numpy as np
import onnxruntime as ort
from onnx.reference import ReferenceEvaluator

feeds = dict(np.load("minimal.npz"))
print("reference", ReferenceEvaluator("minimal.onnx").run(None, feeds))
session = ort.InferenceSession("minimal.onnx", providers=["CPUExecutionProvider"])
print("onnxruntime", ort.__version__, session.run(None, feeds))
