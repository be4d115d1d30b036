"""Plain venvs for the families' ground-truth tests (tests/test_family_truth_*.py): one
`uv venv` per (onnx, onnxruntime) pair with nothing but those two and numpy installed,
and a standalone script of this folder run in it, its last stdout line read as JSON.

No onnx-compat code runs in these venvs: what the script prints is what the releases do
on their own, the answer the matrix's verdicts are held to. onnxruntime releases before
1.18.1 were built against numpy 1.x, so they get `numpy<2` (as the matrix's cells do).
Venvs made by uv have no pip: packages go in with `uv pip install --python`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from packaging.version import Version

from compat.execute.envs import env_python
from compat.execute.installer import find_uv

HERE = Path(__file__).parent


def pins(onnx: str, onnxruntime: str) -> list[str]:
    """The requirements of a plain venv for the pair: numpy<2 under onnxruntime < 1.18.1."""
    old = Version(onnxruntime) < Version("1.18.1")  # built against numpy 1.x
    return [f"onnx=={onnx}", f"onnxruntime=={onnxruntime}", "numpy<2" if old else "numpy"]


def plain_venv(root: Path, onnx: str, onnxruntime: str, base: str | None = None) -> Path:
    """A venv under `root` holding only onnx==`onnx`, onnxruntime==`onnxruntime` and numpy,
    on the interpreter `base` (uv's choice when None; the matrix's cells run on the host's
    interpreter), made once per root and pair (uv's cache makes a second root quick): its
    python."""
    venv = root / f"plain-onnx{onnx}-ort{onnxruntime}"
    python = env_python(venv)
    if not python.exists():
        uv = find_uv()
        subprocess.run(
            [uv, "venv", "-q", *(["--python", base] if base else []), str(venv)], check=True
        )
        install = [uv, "pip", "install", "-q", "--python", str(python)]
        subprocess.run([*install, *pins(onnx, onnxruntime)], check=True)
    return python


def run_script(python: Path, script: str, *args: str) -> Any:
    """Runs tests/data/family_truth/`script` with `python` (a plain venv's) and returns the
    JSON of its last stdout line; a script that fails is an AssertionError with its stderr."""
    done = subprocess.run(
        [str(python), str(HERE / script), *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def plain_answers(
    root: Path, script: str, pairs: list[tuple[str, str]], *args: str, base: str | None = None
) -> dict[str, Any]:
    """`script`'s JSON answer (given `args`) in a plain venv of each (onnx, onnxruntime)
    pair on the interpreter `base`, keyed by the matrix's cell id for the pair
    (`onnx1.16.2-ort1.24.4`)."""
    return {
        f"onnx{o}-ort{r}": run_script(plain_venv(root, o, r, base), script, *args) for o, r in pairs
    }
