# onnxruntime on the minimal model, with graph optimizations off and on
import numpy as np
import onnxruntime as ort

feeds = dict(np.load("minimal.npz"))
levels = ort.GraphOptimizationLevel
for level in (levels.ORT_DISABLE_ALL, levels.ORT_ENABLE_ALL):
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    session = ort.InferenceSession("minimal.onnx", options, providers=["CPUExecutionProvider"])
    print("onnxruntime", ort.__version__, level, session.run(None, feeds))
