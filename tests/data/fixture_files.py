"""What every fixture-making script here writes alike (tests/data/*/make_models.py and
scanned/producers.py): inputs as .npz files that a rerun writes byte for byte, and the
digest each script prints. Standard library and numpy only: the scripts import it by
path, from the plain venvs (no onnx-compat) they run in."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np


def save_npz(path: Path, feeds: dict[str, np.ndarray], compress: bool = True) -> None:
    """`np.savez` with a fixed date on every zip entry (numpy stamps the current time):
    a rerun writes the same bytes. `compress`: deflated entries, else stored."""
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for key, value in feeds.items():
            arr = io.BytesIO()
            np.lib.format.write_array(arr, np.asarray(value), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            zf.writestr(info, arr.getvalue())
    path.write_bytes(buf.getvalue())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
