# onnx's checker, with strict shape inference (full_check), on the minimal model
import onnx

onnx.checker.check_model(onnx.load("minimal.onnx"), full_check=True)
print("onnx", onnx.__version__, "accepts the model")
