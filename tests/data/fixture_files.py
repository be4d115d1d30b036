"""What every fixture-making script here writes alike (tests/data/*/make_models.py and
scanned/producers.py): inputs as .npz files that a rerun writes byte for byte, and the
digest each script prints, and where their downloads are kept. Standard library (and
numpy, for the inputs): the scripts import it by path, from the plain venvs (no
onnx-compat) they run in."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def save_npz(path: Path, feeds: dict[str, np.ndarray], compress: bool = True) -> None:
    """`np.savez` with a fixed date on every zip entry (numpy stamps the current time):
    a rerun writes the same bytes. `compress`: deflated entries, else stored."""
    import numpy as np

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


def cache_dir(name: str, variable: str) -> Path:
    """Where a script keeps what it downloaded: $`variable`, else
    $XDG_CACHE_HOME/onnx-compat/`name` (~/.cache when unset). An empty XDG_CACHE_HOME
    is a fresh machine: everything is downloaded again."""
    given = os.environ.get(variable)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "onnx-compat" / name


def find_uv() -> str:
    """uv: the one installed beside this interpreter (a dependency of onnx-compat), else
    on PATH. The scripts install with uv, never pip: a venv made by uv has no pip."""
    beside = Path(sys.executable).parent / "uv"
    found = str(beside) if beside.is_file() else shutil.which("uv")
    if found is None:
        sys.exit(f"{Path(sys.argv[0]).name}: uv is not installed (pip install uv)")
    return found
