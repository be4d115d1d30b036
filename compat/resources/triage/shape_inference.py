# onnx's shape inference in strict mode on the minimal model
import onnx

inferred = onnx.shape_inference.infer_shapes(onnx.load("minimal.onnx"), strict_mode=True)
print("onnx", onnx.__version__, "infers", [o.type.tensor_type.shape for o in inferred.graph.output])
