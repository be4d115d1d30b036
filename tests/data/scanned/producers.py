"""The producers' side of make_models.py: runs in the venv that holds only the pinned
producers (onnxscript, skl2onnx and scikit-learn), never in the project's.

No ``from __future__ import annotations`` here: onnxscript reads a script function's type
annotations (``FLOAT[1, 3, "H", "W"]``) as values, from this module's globals.
"""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnxscript import FLOAT, script
from onnxscript import opset18 as op
from skl2onnx import to_onnx
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/data: fixture_files
from fixture_files import save_npz


@script()
def padded(x: FLOAT[1, 3, "H", "W"]) -> FLOAT[1, 3, "H2", "W2"]:  # noqa: F821
    pads = op.Constant(value_ints=[0, 0, 1, 1, 0, 0, 1, 1])
    return op.Relu(op.Pad(x, pads))


@script()
def leaky(X: FLOAT["N"], alpha: float) -> FLOAT["N"]:  # noqa: F821
    return op.LeakyRelu(X, alpha=alpha)


@script()
def halved(x: FLOAT["N"]) -> FLOAT["N"]:  # noqa: F821
    y = leaky(x, alpha=0.2)
    n = op.ReduceSum(op.Abs(y), keepdims=0)
    cond = n > 0.5
    while cond:
        n = n * 0.5
        y = y * 0.5
        cond = n > 0.5
    return y


def onnxscript_pad_value_ints() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Pads from ``op.Constant(value_ints=...)``, as onnxscript writes a list attribute."""
    x = np.random.default_rng(11).standard_normal((1, 3, 8, 8)).astype(np.float32)
    return padded.to_model_proto(), {"x": x}


def onnxscript_function_while() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A script function with an attribute, called from a model with a ``while`` loop."""
    x = np.random.default_rng(12).standard_normal(5).astype(np.float32) * 4
    return halved.to_model_proto(), {"x": x}


def skl2onnx_kmeans() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """scikit-learn's KMeans on iris, converted by skl2onnx's ``to_onnx`` at opset 18."""
    features, _ = load_iris(return_X_y=True)
    features = features.astype(np.float32)
    fitted = KMeans(n_clusters=3, n_init=3, random_state=0).fit(features)
    model = to_onnx(fitted, features[:1], target_opset={"": 18, "ai.onnx.ml": 3})
    rows = np.random.default_rng(13).choice(len(features), size=6, replace=False)
    return model, {"X": features[np.sort(rows)]}


MODELS = (onnxscript_pad_value_ints, onnxscript_function_while, skl2onnx_kmeans)


def write_models(out: Path) -> list[Path]:
    """Each model as its producer returned it (checked, not edited) and its inputs."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for make in MODELS:
        model, feeds = make()
        onnx.checker.check_model(model)
        path = out / f"{make.__name__}.onnx"
        onnx.save_model(model, str(path))
        save_npz(out / f"{make.__name__}.npz", feeds)
        written += [path, out / f"{make.__name__}.npz"]
    return written


if __name__ == "__main__":
    print("\n".join(p.name for p in write_models(Path(sys.argv[1]))))
