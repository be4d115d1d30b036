"""Benchmark `nox -s triage` on a 200-node model with one buried construct.

    python bench/triage.py [--unrelated 180] [--skip-alternative]

The model: value_ints pads (Constant(value_ints) -> Pad, rejected by onnx < 1.21's
strict shape inference) buried among ~200 ordinary nodes (tests/helpers.py `buried`).

1. What users type: `nox -s triage -- MODEL --axis onnx --fresh` on a fresh clone of
   HEAD, the default onnx axis (10 releases), environments warm (the state directory
   users have, `.compat/`; a first run warms it), every check run again (`--fresh`).
2. The reduction alone, side by side: the same delta debugging of the same finding
   with candidates evaluated by one long-lived worker per release (what triage does,
   compat/execute/served.py) vs one worker process per candidate (compat/execute/worker.py, as the
   matrix starts its workers).

Prints the date, the calibration figure and a table with the ratio; README's triage
figure comes from it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix_vs_noxfile import calibration, clone  # noqa: E402  (bench/ is this script's path)


def build_model(folder: Path, unrelated: int) -> Path:
    import numpy as np
    import onnx
    from onnx import helper

    from compat.corpus.make import randn
    from tests.helpers import buried

    core = [
        helper.make_node("Constant", [], ["pads"], value_ints=[0, 1, 1, 0, 1, 1]),
        helper.make_node("Pad", ["p", "pads"], ["padded"]),
    ]
    model, feeds = buried(core, {"p": randn(1, 1, 2, 3)}, "padded", unrelated=unrelated)
    path = folder / "buried200.onnx"
    onnx.save(model, str(path))
    np.savez(path.with_suffix(".npz"), **feeds)  # type: ignore[arg-type]
    return path


def nox_triage(repo: Path, model: Path, out: Path, *args: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "triage", "--", str(model), "--axis", "onnx",
         "--state-dir", str(ROOT / ".compat"), "--out", str(out), *args],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"nox -s triage failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, json.loads((out / "triage.json").read_text())


def reduction(model_path: Path, work: Path, served: bool) -> tuple[float, int, int]:
    """Seconds, candidates and nodes kept: the shape_inference finding reduced between
    onnx 1.20.1 (fails) and 1.21.0 (passes), candidates in served or one-off workers."""
    import numpy as np
    import onnx

    from compat.core.outcomes import CheckResult
    from compat.corpus.dropin import model_case
    from compat.execute.envs import existing_env
    from compat.execute.served import ServedWorker
    from compat.execute.worker import Task, run_worker
    from compat.followup.reduce import reduce
    from compat.followup.triage.common import only_check
    from compat.followup.triage.findings import Finding
    from compat.followup.triage.minimal import SameFailure
    from compat.plan.config import load_config
    from compat.plan.matrix import make_cell

    config = load_config(ROOT / "pyproject.toml")
    model = onnx.load(str(model_path))
    with np.load(model_path.with_suffix(".npz")) as z:
        feeds = {k: z[k] for k in z.files}
    case = only_check(model_case("triage.bench", "bench", model, [feeds]), "shape_inference")
    bad_cell, good_cell = (make_cell(config, v, config.onnx.pair) for v in ("1.20.1", "1.21.0"))
    envs = [existing_env(c, ROOT / ".compat" / "envs") for c in (bad_cell, good_cell)]
    if None in envs:
        sys.exit("the onnx 1.20.1 and 1.21.0 environments are missing: run part 1 first")
    bad_env, good_env = envs  # type: ignore[misc]
    runs = iter(range(10**6))

    def one_off(env: Any) -> Any:
        def evaluate(case_id: str, check: str, directory: Path) -> dict[str, Any]:
            task = Task(case_id, check, str(directory))
            folder = work / f"worker{next(runs)}"
            (record,) = run_worker(env.python, [task], folder, 120.0, env.code, env.record.limits)
            return record

        return evaluate

    started = time.perf_counter()
    if served:
        with ServedWorker(bad_env, work / "bad", 120) as bad, \
                ServedWorker(good_env, work / "good", 120) as good:  # fmt: skip
            first = bad.run(case.id, "shape_inference", _written(case, work / "first"))
            finding = Finding("shape_inference", "onnx", "fixed", bad_cell, good_cell,
                              CheckResult.from_dict({**first, "cell": bad_cell.id}))  # fmt: skip
            same = SameFailure(finding, case, work / "c", bad.run, good.run)
            reduced = reduce(model, feeds, same)
    else:
        bad_run, good_run = one_off(bad_env), one_off(good_env)
        first = bad_run(case.id, "shape_inference", _written(case, work / "first"))
        finding = Finding("shape_inference", "onnx", "fixed", bad_cell, good_cell,
                          CheckResult.from_dict({**first, "cell": bad_cell.id}))  # fmt: skip
        reduced = reduce(model, feeds, SameFailure(finding, case, work / "c", bad_run, good_run))
    return time.perf_counter() - started, reduced.tried, len(reduced.model.graph.node)


def _written(case: Any, root: Path) -> Path:
    from compat.corpus.discover import write_case

    return write_case(case, root).directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--unrelated", type=int, default=180, help="ordinary nodes around it")
    parser.add_argument("--skip-alternative", action="store_true", help="skip comparison 2")
    args = parser.parse_args()
    print(f"{date.today()}, calibrate: {calibration()} (10.8 s or more: a slow hour)")
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
        work = Path(tmp)
        model = build_model(work, args.unrelated)
        import onnx

        nodes = len(onnx.load(str(model)).graph.node)
        repo = clone("HEAD", work / "ours")
        nox_triage(repo, model, work / "warm")  # environments and staged code exist after it
        wall, document = nox_triage(repo, model, work / "out", "--fresh")
        findings = document["findings"]
        minimal = ", ".join(
            f"{f['check']}: {f['minimal']['nodes']} nodes in {f['minimal']['candidates']} "
            "candidates" for f in findings if f["minimal"]
        )  # fmt: skip
        rows.append((f"nox -s triage -- {nodes}-node model --axis onnx --fresh", f"{wall:.1f} s",
                     f"{len(findings)} findings; {minimal}", ""))  # fmt: skip
        if not args.skip_alternative:
            served = reduction(model, work / "served", served=True)
            one_off = reduction(model, work / "one-off", served=False)
            rows.append((f"reduction of {nodes} nodes, served workers vs one process per "
                         "candidate", f"{served[0]:.1f} s ({served[1]} candidates, "
                         f"{served[2]} nodes kept)", f"{one_off[0]:.1f} s ({one_off[1]} "
                         f"candidates)", f"{served[0] / one_off[0]:.2f}"))  # fmt: skip
    print("\n| measurement | triage (HEAD) | alternative / detail | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
