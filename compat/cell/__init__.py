"""Everything that runs inside a pinned environment (a cell).

One rule for this folder: Python 3.9+, importing only the standard library,
onnx, onnxruntime and numpy, never the host side. It runs as
``python -m compat.cell COMMAND ...`` with the repository root on PYTHONPATH.
"""

from __future__ import annotations

import os
from typing import List

#: The folder that holds the `compat` package: a cell's PYTHONPATH.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def files() -> List[str]:
    """Every file a cell executes, relative to ROOT: the runner, the result cache key
    and repro scripts read this one list."""
    here = os.path.dirname(os.path.abspath(__file__))
    names = sorted(n for n in os.listdir(here) if n.endswith(".py"))
    return ["compat/__init__.py", *("compat/cell/" + n for n in names)]
