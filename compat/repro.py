"""Reproduce a cell under exact pins (a CI's), and write self-contained repro scripts."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from compat.config import Config
from compat.corpus import CaseFiles
from compat.envs import WORKER
from compat.errors import UsageError
from compat.matrix import Cell, requirements
from compat.outcomes import CellRecord, CheckResult, Outcome
from compat.versions import parse_version

FAILING = frozenset({Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.XFAIL})
_PIN = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*==\s*([A-Za-z0-9_.+!-]+)\s*(?:;.*)?$")

#: What each built-in check calls, for the reader of a repro script.
WHAT = {
    "checker": "onnx.checker.check_model(model, full_check=True)",
    "shape_inference": "onnx.shape_inference.infer_shapes(model, strict_mode=True), then the "
    "inferred output shapes are compared with the case's expectation",
    "reference": "onnx.reference.ReferenceEvaluator(model).run(None, inputs) vs the oracle",
    "ort_run": "onnxruntime.InferenceSession at every optimization level vs the oracle",
    "ort_optimized": "the op counts of onnxruntime's optimized_model_filepath graph",
    "annotations": "the declared shape annotations on real runs (compat/annotations.py)",
    "inferred_annotations": "annotations added by onnx shape inference on real runs",
    "annotations_builtin": "ReferenceEvaluator(check_shape_annotations=True) vs ours",
    "version_converter": "onnx.version_converter.convert_version(model, target), then the "
    "checker and onnxruntime on the result",
}


@dataclass(frozen=True)
class Pins:
    onnx: str | None
    onnxruntime: str | None
    extra: tuple[str, ...]  # other exact pins (numpy==..., protobuf==...)


def parse_pins(specs: list[str], requirements_file: Path | None) -> Pins:
    """`onnx==1.18.0` and friends, from the command line and a requirements file."""
    found: dict[str, str] = {}
    sources: list[tuple[str, str]] = [(s, "the command line") for s in specs]
    if requirements_file is not None:
        try:
            lines = requirements_file.read_text().splitlines()
        except OSError as exc:
            raise UsageError(f"{requirements_file}: cannot read ({exc.strerror})") from None
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                sources.append((line, str(requirements_file)))
    for spec, where in sources:
        match = _PIN.match(spec)
        if not match:
            if where == "the command line":
                raise UsageError(f"{spec!r}: pin releases exactly, like onnx==1.18.0")
            continue  # a range in a requirements file: left to the resolver, as in the matrix
        name = match.group(1).lower().replace("_", "-")
        parse_version(match.group(2), f"{where}: {spec}")
        found.setdefault(name, match.group(2))
    onnx, ort = found.pop("onnx", None), found.pop("onnxruntime", None)
    if onnx is None and ort is None:
        raise UsageError("pin onnx or onnxruntime (or both), like: nox -s repro -- onnx==1.18.0")
    return Pins(onnx, ort, tuple(f"{name}=={version}" for name, version in sorted(found.items())))


def repro_cell(pins: Pins, config: Config) -> Cell:
    """The cell for these pins; an unpinned package takes its matrix pair release."""
    onnx = pins.onnx or config.onnxruntime.pair
    ort = pins.onnxruntime or config.onnx.pair
    reqs = requirements(onnx, ort, config.constraints) + pins.extra
    tag = hashlib.sha256(" ".join(pins.extra).encode()).hexdigest()[:8] if pins.extra else ""
    return Cell(onnx, ort, reqs, tag)


def repro_command(cell: CellRecord, cases: list[str]) -> str:
    command = f"nox -s repro -- onnx=={cell.onnx} onnxruntime=={cell.onnxruntime}"
    return command + (f" --cases {','.join(cases)}" if cases else "")


def _b64(data: bytes) -> str:
    text = base64.b64encode(data).decode()
    return "\n".join(text[i : i + 100] for i in range(0, len(text), 100))


def write_script(result: CheckResult, cell: CellRecord, files: CaseFiles, out: Path) -> Path:
    """A repro folder: requirements.txt with the exact pins and a repro.py that needs
    nothing else — the model, its arrays and the worker's code travel inside it."""
    folder = out / cell.id / f"{result.case}.{result.check}"
    folder.mkdir(parents=True, exist_ok=True)
    pins = [f"{name}=={version}" for name, version in sorted(cell.packages.items())]
    (folder / "requirements.txt").write_text("\n".join(pins) + "\n")
    spec = json.loads((files.directory / "case.json").read_text())
    custom = {name: Path(c["file"]).read_bytes() for name, c in spec["custom_checks"].items()}
    blobs = {
        "case/model.onnx": (files.directory / "model.onnx").read_bytes(),
        "case/data.npz": (files.directory / "data.npz").read_bytes(),
        "worker.py": WORKER.read_bytes(),
        "annotations.py": WORKER.with_name("annotations.py").read_bytes(),
        **{f"custom/{name}.py": data for name, data in custom.items()},
    }
    script = TEMPLATE.format(
        case=result.case,
        check=result.check,
        cell=cell.id,
        python=cell.python,
        outcome=result.summary.replace('"""', "'''").replace("\\", "/")[:2000],
        what=WHAT.get(result.check, "a check the case defines itself"),
        spec=json.dumps(spec, sort_keys=True),
        blobs="\n".join(f'    {name!r}: """\n{_b64(data)}\n""",' for name, data in blobs.items()),
    )
    path = folder / "repro.py"
    path.write_text(script)
    path.chmod(0o755)
    return path


TEMPLATE = '''#!/usr/bin/env python3
"""Reproduces {case} · {check} from the onnx-compat cell {cell} (Python {python}).

Recorded: {outcome}

The check: {what}.

    python -m venv venv && venv/bin/pip install --only-binary :all: -r requirements.txt
    venv/bin/python repro.py        # exit 0: passes now; 1: fails as recorded; a crash crashes

Everything it needs is inside this file: the model and its arrays, and the
onnx-compat worker that ran the check.
"""

import base64
import json
import os
import sys
import tempfile

CASE = {case!r}
CHECK = {check!r}
SPEC = json.loads({spec!r})
BLOBS = {{
{blobs}
}}


def main():
    folder = tempfile.mkdtemp(prefix="compat-repro-")
    for name, text in BLOBS.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode("".join(text.split())))
    for name, custom in SPEC["custom_checks"].items():
        custom["file"] = os.path.join(folder, "custom", name + ".py")
    with open(os.path.join(folder, "case", "case.json"), "w") as f:
        json.dump(SPEC, f)
    sys.path.insert(0, folder)
    import worker

    task = {{"case": CASE, "check": CHECK, "case_dir": os.path.join(folder, "case")}}
    record = worker.run_task({{}}, task)
    import onnx
    import onnxruntime

    print("onnx %s, onnxruntime %s" % (onnx.__version__, onnxruntime.__version__))
    head = record["outcome"] + ("@" + record["phase"] if record["phase"] else "")
    print("%s · %s: %s: %s" % (CASE, CHECK, head, record["detail"]))
    if record.get("traceback"):
        print(record["traceback"])
    return 0 if record["outcome"] in ("pass", "skip") else 1


if __name__ == "__main__":
    sys.exit(main())
'''
