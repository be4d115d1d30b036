"""The alternative bench/matrix_vs_noxfile.py races: a noxfile as people write it by hand.

Not a bench itself (`nox -s bench` lists only scripts). One session per
onnx/onnxruntime pair, nox's virtualenv backend (virtualenv + pip), run one after
another, each installing its pins and running the same checks with the same in-cell
code (compat/cell/) on the same case files. bench/matrix_vs_noxfile.py copies this file
next to a generated `pairs.json` and `plan.json`.
"""

import json
from pathlib import Path

import nox

HERE = Path(__file__).parent
PAIRS = json.loads((HERE / "pairs.json").read_text())


def make(onnx: str, ort: str, extra: list[str]) -> None:
    @nox.session(name=f"onnx{onnx}-ort{ort}", venv_backend="virtualenv")
    def cell(session: nox.Session) -> None:
        session.install(f"onnx=={onnx}", f"onnxruntime=={ort}", "numpy", "protobuf", *extra)
        results = HERE / f"results-{onnx}-{ort}.jsonl"
        results.write_text("")
        plan = str(HERE / "plan.json")
        code = {"PYTHONPATH": str(HERE / "code")}
        session.run("python", "-m", "compat.cell", "run", plan, str(results), "0", env=code)


for pair in PAIRS:
    make(pair["onnx"], pair["onnxruntime"], pair["extra"])
