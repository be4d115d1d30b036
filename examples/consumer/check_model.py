"""This project's own test: its model loads and runs in onnxruntime (exit 0) or not (1).

`onnx-compat init --run 'check=python check_model.py'` makes it a check of every cell.
"""

import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

here = Path(__file__).parent
session = ort.InferenceSession(str(here / "models" / "layer_norm.onnx"))
feeds = dict(np.load(here / "models" / "layer_norm.npz"))
outputs = session.run(None, feeds)
print("onnxruntime", ort.__version__, "output shapes", [o.shape for o in outputs])
sys.exit(0 if all(np.isfinite(o).all() for o in outputs) else 1)
