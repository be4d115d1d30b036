"""The scripts that make the tests' fixtures run on a fresh machine (issue #31): in a venv
made by uv, which has no pip, with nothing of this project cached (an empty
XDG_CACHE_HOME). uv's own package cache stays warm: only its downloads are shared."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat.execute.installer import find_uv
from tests.conftest import ROOT

pytestmark = [pytest.mark.envs, pytest.mark.subprocess]

DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A uv venv with numpy only (what the scripts import) and a fresh machine's
    environment: empty caches, every ONNX_COMPAT_* variable unset."""
    root = tmp_path_factory.mktemp("fresh")
    uv = find_uv()
    uv_cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONNX_COMPAT_")}
    env.update(XDG_CACHE_HOME=str(root / "cache"), UV_CACHE_DIR=uv_cache.stdout.strip())
    venv = root / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], env=env, check=True)
    python = venv / "bin" / "python"
    install = [uv, "pip", "install", "-q", "--python", str(python), "numpy"]
    subprocess.run(install, env=env, check=True)
    no_pip = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, check=False)
    assert no_pip.returncode != 0  # the point: nothing may need pip
    return python, env


SCRIPTS = {
    "adopted": ["adopted/make_project.py", "{out}"],
    "exporters": ["exporters/make_models.py", "--out", "{out}", "--only", "magika_standard_v1"],
    "scanned": ["scanned/make_models.py", "--out", "{out}"],
    "new_exporters": [
        "new_exporters/make_models.py",
        "--out",
        "{out}",
        "--only",
        "ort_logreg_iris",
    ],
}
#: what each script must have written into its output folder
WRITES = {
    "adopted": ["pyproject.toml", "tests/test_function.py", ".git"],
    "exporters": ["magika_standard_v1.onnx", "magika_standard_v1.npz"],
    "scanned": ["skl2onnx_kmeans.onnx"],
    "new_exporters": ["ort_logreg_iris.onnx"],
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_fixture_script_runs_in_a_uv_venv_without_pip_and_with_empty_caches(
    name: str, fresh: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    python, env = fresh
    out = tmp_path / "out"
    script, *args = (a.format(out=out) for a in SCRIPTS[name])
    command = [str(python), str(DATA / script), *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    for written in WRITES[name]:
        assert (out / written).exists(), (written, sorted(p.name for p in out.iterdir()))
    # what it downloaded is in the fresh machine's cache, nowhere else of this project's
    assert (Path(env["XDG_CACHE_HOME"]) / "onnx-compat").is_dir()
