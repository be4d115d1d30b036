"""`python -m compat.cell probe`: proves a cell's stack works, prints what is installed."""

from __future__ import annotations

import json

from compat.cell.session import ort_limits


def installed(name):
    """The installed version of a distribution, or "" when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return ""


def main(argv):
    """`probe [NAME ...]`: proves the environment really works: imports, then runs a
    one-node model; prints the versions installed, NAME's too.

    A mere import is not enough: onnxruntime < 1.18.1 under numpy 2 imports
    with a warning and fails only when it first touches an array.
    """
    import platform

    import numpy as np
    import onnx
    import onnxruntime as ort
    from google import protobuf
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "probe", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    (out,) = session.run(None, {"x": np.array([1.0, -2.0], dtype=np.float32)})
    if out.tolist() != [-1.0, 2.0]:
        raise RuntimeError("onnxruntime computed Neg([1, -2]) = %r" % (out.tolist(),))
    packages = {
        "onnx": onnx.__version__,
        "onnxruntime": ort.__version__,
        "numpy": np.__version__,
        "protobuf": protobuf.__version__,
    }
    for name in argv:  # the extra axes' and pins' packages: as installed
        packages[name] = installed(name)
    from importlib import metadata

    everything = {}
    for dist in metadata.distributions():  # what the cell really holds, for repro scripts
        name = dist.metadata["Name"]
        if name:
            everything[name.lower().replace("_", "-")] = dist.version
    print(
        json.dumps(
            {
                "packages": packages,
                "installed": everything,
                "python": platform.python_version(),
                "platform": platform.platform(),
                "limits": list(ort_limits()),
            },
            sort_keys=True,
        )
    )
    return 0
