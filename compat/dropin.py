"""Drop-in models: every `*.onnx` in a directory becomes a case of its own.

A drop-in has no hand-written oracle, so it gets the checks that need none:
`checker`, `shape_inference`, the annotation checks, `ort_run` (every
optimization level agrees with optimizations disabled) and `reference` (the
reference evaluator agrees with onnxruntime). Its inputs come from the
same-named `*.npz` beside it, or are generated from the input annotations.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import onnx

from compat.case import Case
from compat.cell.inputs import generate_inputs
from compat.errors import ConfigError

CHECKS = (
    "checker",
    "shape_inference",
    "reference",
    "ort_run",
    "annotations",
    "inferred_annotations",
    "annotations_builtin",
)


def slug(text: str) -> str:
    """A case-id-safe version of a file or directory name."""
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "model"


def _feeds(model: onnx.ModelProto, npz: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(npz, allow_pickle=False) as data:
            feeds = {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise ConfigError(f"{npz}: not an npz archive of arrays ({exc})") from None
    initializers = {t.name for t in model.graph.initializer}
    required = [i.name for i in model.graph.input if i.name not in initializers]
    missing = [n for n in required if n not in feeds]
    if missing:
        raise ConfigError(
            f"{npz}: missing input {missing[0]!r} (the model's inputs: {', '.join(required)})"
        )
    return feeds


def load_dropins(directory: Path) -> tuple[str, str, list[Case]]:
    """(family id, description, cases) for one drop-in directory."""
    if not directory.is_dir():
        raise ConfigError(f"{directory}: drop-in model directory not found")
    family = slug(directory.resolve().name)
    cases = []
    for path in sorted(directory.glob("*.onnx")):
        try:
            model = onnx.load(str(path))
        except Exception as exc:
            raise ConfigError(f"{path}: not a readable ONNX model ({type(exc).__name__})") from None
        npz = path.with_suffix(".npz")
        try:
            feeds = _feeds(model, npz) if npz.exists() else generate_inputs(model)
        except ValueError as exc:
            raise ConfigError(f"{path}: {exc}; put its inputs in {npz.name}") from None
        cases.append(
            Case(
                id=f"{family}.{slug(path.stem)}",
                description=f"drop-in {path.name}"
                + (f" with {npz.name}" if npz.exists() else " with generated inputs"),
                model=model,
                inputs=feeds,
                builtin_checks=CHECKS,
                oracle="onnxruntime",
                rtol=1e-4,
                atol=1e-5,
            )
        )
    if not cases:
        raise ConfigError(f"{directory}: no *.onnx models in this drop-in directory")
    return family, f"Drop-in models from {directory}.", cases
