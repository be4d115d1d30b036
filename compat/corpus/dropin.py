"""Drop-in models: every `*.onnx` in a directory becomes a case of its own.

A drop-in has no hand-written oracle, so it gets the checks that need none:
`checker`, `shape_inference`, the annotation checks, `ort_run` (every
optimization level agrees with optimizations disabled) and `reference` (the
reference evaluator agrees with onnxruntime).

Its inputs: `MODEL.npz` beside `MODEL.onnx` is the first run, `MODEL.1.npz`,
`MODEL.2.npz` … are further runs (the annotation checks judge each with a fresh
binding map); without `MODEL.npz` the inputs are generated from the input
annotations. Every saved array is checked against the model's declared inputs here,
on the host, before any cell runs. The folder may hold a `compat.toml` with
`[[known]]` tables (known failures whose `cases` glob matches model file names), and the
tolerance its models' outputs are compared with: `rtol` and `atol` for every model,
`[[tolerance]]` tables for some models or outputs (compat/plan/tolerance.py).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError

from compat.cell.inputs import generate_inputs
from compat.cell.semantics import np_dtype
from compat.cell.untrusted import UntrustedData, load_untrusted
from compat.core.case import BUILTIN_CHECKS, NEEDS, Case
from compat.core.errors import ConfigError
from compat.corpus.inputs import check_feeds, load_npz, type_text
from compat.corpus.known import attach
from compat.plan.known_tables import KnownEntry, known_tables
from compat.plan.schema import validate
from compat.plan.tolerance import (
    ModelTolerance,
    Tolerance,
    ToleranceTable,
    check_tables,
    for_model,
    read_tolerance,
    tolerance_tables,
)

#: the default checks that need nothing declared (the check table's `needs`): a drop-in
#: model has a model and inputs, and no expectation of its own
CHECKS = tuple(c for c in BUILTIN_CHECKS if c not in NEEDS)
#: the drop-in folder's own settings file (its keys: the schema's `definitions/folder`)
FOLDER_CONFIG = "compat.toml"


def slug(text: str) -> str:
    """A case-id-safe version of a file or directory name."""
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "model"


def warn(message: str) -> None:
    print(f"onnx-compat: warning: {message}", file=sys.stderr)


def load_model(path: Path) -> onnx.ModelProto:
    """The model, its external data checked and inlined (compat/cell/untrusted.py), or one
    error line: unreadable, truncated, not an ONNX model, or data kept outside its folder."""
    try:
        model = load_untrusted(str(path))
    except UntrustedData as exc:
        raise ConfigError(str(exc)) from None
    except DecodeError as exc:
        raise ConfigError(
            f"{path}: not a readable ONNX model: the file is truncated or not an ONNX "
            f"protobuf ({exc}); export or copy it again"
        ) from None
    except Exception as exc:
        raise ConfigError(
            f"{path}: not a readable ONNX model ({type(exc).__name__}: {exc})"
        ) from None
    # protobuf parses a file cut at a field boundary: what it lost is what is missing
    if not model.graph.output or not model.opset_import or not model.ir_version:
        lost = (
            "graph outputs"
            if not model.graph.output
            else ("opset_import" if not model.opset_import else "ir_version")
        )
        raise ConfigError(
            f"{path}: not a complete ONNX model (it has no {lost}: truncated, or not an ONNX "
            "file); export or copy it again"
        )
    return model


def regular_files(directory: Path, pattern: str, quiet: bool = False) -> list[Path]:
    """The regular files matching `pattern`: a FIFO, a device or a folder of that name
    would hang or fail a read, so it is skipped with a warning."""
    found = []
    for path in sorted(directory.glob(pattern)):
        if path.is_file():
            found.append(path)
        elif not quiet and path.is_symlink() and not path.exists():
            warn(f"{path}: a link that leads nowhere (dangling, or a loop); skipped")
        elif not quiet:
            warn(f"{path}: not a regular file (a FIFO, a device or a folder?); skipped")
    return found


def run_files(model_path: Path, models: list[Path]) -> list[Path]:
    """MODEL.npz, then MODEL.1.npz, MODEL.2.npz …: one file per run, numbered without gaps."""
    first = model_path.with_suffix(".npz")
    stem = model_path.stem
    numbered: dict[int, Path] = {}
    for npz in regular_files(model_path.parent, "*.npz", quiet=True):
        middle = npz.name[len(stem) + 1 : -len(".npz")]
        if npz.name.startswith(stem + ".") and middle.isdigit():
            if str(int(middle)) != middle or int(middle) == 0:
                raise ConfigError(
                    f"{npz}: number further runs 1, 2, …, like {stem}.1.npz, {stem}.2.npz"
                )
            twin = npz.with_suffix(".onnx")
            if twin in models:
                raise ConfigError(
                    f"{npz}: both the inputs of {twin.name} and run {middle} of "
                    f"{model_path.name}; rename one of the models"
                )
            numbered[int(middle)] = npz
    if numbered and not first.exists():
        raise ConfigError(
            f"{numbered[min(numbered)]}: a further run, but the first run's inputs are "
            f"missing; put them in {first.name}"
        )
    for k in range(1, len(numbered) + 1):
        if k not in numbered:
            raise ConfigError(
                f"{numbered[max(numbered)]}: runs are numbered without gaps, and "
                f"{stem}.{k}.npz is missing"
            )
    return ([first] if first.exists() else []) + [numbered[k] for k in sorted(numbered)]


def _generated(model: onnx.ModelProto, path: Path) -> dict[str, np.ndarray]:
    """Inputs from the annotations; a non-float one is flagged, its values are arbitrary."""
    initializers = {t.name for t in model.graph.initializer}
    for info in model.graph.input:
        tensor = info.type.tensor_type if info.type.HasField("tensor_type") else None
        dtype = np_dtype(tensor.elem_type) if tensor else None
        if info.name not in initializers and (dtype is None or dtype.kind not in "fiub"):
            kind = type_text(tensor.elem_type) if tensor else info.type.WhichOneof("value")
            raise ConfigError(
                f"{path}: input {info.name!r} ({kind}) cannot be generated; "
                f"put the inputs in {path.stem}.npz"
            )
    try:
        feeds = generate_inputs(model)
    except ValueError as exc:  # sizes past what a generated input may hold
        raise ConfigError(f"{path}: {exc}") from None
    declared = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    for name, array in feeds.items():
        if array.dtype.kind != "f":
            values = "random booleans" if array.dtype.kind == "b" else "random integers 0–4"
            warn(
                f"{path}: input {name!r} ({type_text(declared[name])}) gets generated values "
                f"({values}), which may mean nothing to the model; add it to {path.stem}.npz"
            )
    return feeds


def _folder_table(directory: Path) -> tuple[Path, dict[str, Any]]:
    """The folder's compat.toml and what it holds ({} without the file)."""
    path = directory / FOLDER_CONFIG
    if not path.exists():
        return path, {}
    try:
        table = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {exc}") from None
    validate(table, path, "folder")  # rtol, atol, [[tolerance]] and [[known]] tables only
    return path, table


def folder_known(directory: Path) -> list[KnownEntry]:
    """The `[[known]]` tables of the folder's compat.toml (none without the file)."""
    path, table = _folder_table(directory)
    return known_tables(table.get("known", []), "known", path)


def folder_tolerance(
    directory: Path, base: Tolerance | None = None
) -> tuple[Tolerance, list[ToleranceTable]]:
    """The folder's tolerance (its `rtol` and `atol` over `base`, `[tool.compat]`'s) and
    its `[[tolerance]]` tables."""
    path, table = _folder_table(directory)
    folder = read_tolerance(table, base)
    return folder, tolerance_tables(table.get("tolerance", []), path)


def model_tolerance(path: Path, base: Tolerance | None = None) -> ModelTolerance:
    """One model's tolerance: the compat.toml beside it, over `base`."""
    folder, tables = folder_tolerance(path.parent, base)
    return for_model(folder, tables, path.name)


def model_case(
    case_id: str,
    description: str,
    model: onnx.ModelProto,
    runs: list[dict[str, np.ndarray]],
    tolerance: ModelTolerance | None = None,
) -> Case:
    """A model nobody wrote an oracle for, as a case: the checks that need none,
    onnxruntime with optimizations off as the reference, one run per feeds dict, its
    outputs compared within `tolerance` (the default's without one)."""
    tolerance = tolerance or ModelTolerance()
    return Case(
        id=case_id,
        description=description,
        model=model,
        inputs=runs[0],
        extra_runs=tuple(runs[1:]),
        builtin_checks=CHECKS,
        oracle="onnxruntime",
        rtol=tolerance.every.rtol,
        atol=tolerance.every.atol,
        output_tolerances={name: (t.rtol, t.atol) for name, t in tolerance.outputs.items()},
    )


def model_runs(
    path: Path, model: onnx.ModelProto, given: Path | None = None
) -> list[dict[str, np.ndarray]]:
    """The inputs of each run of one model: `given` (an .npz), else MODEL.npz,
    MODEL.1.npz … beside it, else generated from the input annotations; each checked
    against the model's declared inputs."""
    if given is not None and not given.is_file():
        raise ConfigError(f"--inputs {given}: no such file; give the .npz of the model's inputs")
    runs = [given] if given is not None else run_files(path, [path])
    feeds = [load_npz(npz) for npz in runs]
    for npz, run in zip(runs, feeds, strict=True):
        check_feeds(model, run, npz)
    return feeds or [_generated(model, path)]


def load_dropins(
    directory: Path, tolerance: Tolerance | None = None
) -> tuple[str, str, list[Case]]:
    """(family id, description, cases) for one drop-in directory; `tolerance`:
    `[tool.compat]`'s, under the folder's own."""
    if not directory.is_dir():
        raise ConfigError(f"{directory}: drop-in model directory not found")
    family = slug(directory.resolve().name)
    models = regular_files(directory, "*.onnx")
    known = folder_known(directory)
    folder, tables = folder_tolerance(directory, tolerance)
    outputs: dict[str, list[str]] = {}
    cases: list[Case] = []
    files: dict[str, Path] = {}
    for path in models:
        model = load_model(path)
        runs = run_files(path, models)
        feeds = [load_npz(npz) for npz in runs]
        for npz, run in zip(runs, feeds, strict=True):
            check_feeds(model, run, npz)
        if not feeds:
            feeds = [_generated(model, path)]
        case_id = f"{family}.{slug(path.stem)}"
        if case_id in files:
            raise ConfigError(
                f"{path}: its case id {case_id} is also {files[case_id].name}'s; rename one"
            )
        files[case_id] = path
        outputs[path.name] = [o.name for o in model.graph.output]
        given = ", ".join(n.name for n in runs) or "generated inputs"
        own = for_model(folder, tables, path.name)
        cases.append(model_case(case_id, f"drop-in {path.name} with {given}", model, feeds, own))
    if not cases:
        raise ConfigError(f"{directory}: no *.onnx models in this drop-in directory")
    check_tables(tables, outputs)
    claimed = {npz for path in models for npz in run_files(path, models)}
    for npz in sorted(set(regular_files(directory, "*.npz")) - claimed):
        warn(f"{npz}: belongs to no model here (inputs are MODEL.npz, MODEL.1.npz, …); unused")
    names = {case_id: path.name for case_id, path in files.items()}
    cases = attach(
        cases,
        known,
        name=lambda case: names[case.id],
        must_match=f"model file in {directory} (globs here match file names, like "
        f"{models[0].name!r})",
    )
    return family, f"Drop-in models from {directory}.", cases
