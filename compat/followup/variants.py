"""`python -m compat variants MODEL.onnx --out DIR [--rewrites GLOB]`: every applicable
spelling of a model (compat/corpus/rewrites.py) written beside its inputs, with a JSON list of
what was rewritten where."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import onnx

from compat.core.errors import UsageError
from compat.corpus.dropin import load_model
from compat.corpus.rewrites import select, variants


def write_variants(model_path: Path, out: Path | None, rewrites: str | None) -> int:
    """Writes each variant of the model (with its inputs, renamed) to `out`, by default
    MODEL~variants/ beside it, and variants.json listing them; `rewrites`: globs."""
    if not model_path.is_file():
        raise UsageError(f"{model_path}: no such model file")
    model = load_model(model_path)  # external data checked and inlined: it is untrusted
    out = out or model_path.parent / f"{model_path.stem}~variants"
    out.mkdir(parents=True, exist_ok=True)
    inputs = sorted(model_path.parent.glob(f"{model_path.stem}.npz")) + sorted(
        model_path.parent.glob(f"{model_path.stem}.[0-9]*.npz")
    )
    listed = []
    for rewrite, applied in variants(model, select(rewrites)):
        name = f"{model_path.stem}~{rewrite.name}"
        onnx.save(applied.model, str(out / f"{name}.onnx"))
        for npz in inputs:  # the same inputs, named for the variant (MODEL.npz, MODEL.1.npz)
            shutil.copy(npz, out / npz.name.replace(model_path.stem, name, 1))
        listed.append(
            {
                "rewrite": rewrite.name,
                "description": rewrite.description,
                "file": f"{name}.onnx",
                "where": list(applied.where),
                "reports": list(rewrite.reports),
            }
        )
        print(f"{name}.onnx: {rewrite.description} ({', '.join(applied.where)})")
    (out / "variants.json").write_text(json.dumps(listed, indent=1) + "\n")
    print(f"{len(listed)} variants of {model_path} in {out}/ (variants.json lists them)")
    return 0
