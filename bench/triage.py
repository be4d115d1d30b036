"""Time `nox -s triage` on a 221-node model with one buried construct, and its reduction.

    nox -s bench -- triage [--unrelated 180] [--skip-alternative]

The model: value_ints pads (Constant(value_ints) -> Pad, rejected by onnx < 1.21's
strict shape inference) buried among ~200 ordinary nodes (tests/helpers.py `buried`).

1. What users type: `nox -s triage -- MODEL --axis onnx --fresh` on a fresh clone of
   HEAD, the default onnx axis (10 releases), warm environments and nox's venv kept (an
   untimed first triage in the same state directory builds them), every check run again
   (`--fresh`). It must exit 0 and find the construct, reduced to a minimal model.
2. The reduction alone, side by side: the same delta debugging of the same finding
   with candidates evaluated by one long-lived worker per release (what triage does,
   compat/execute/served.py) vs one worker process per candidate
   (compat/execute/worker.py, as the matrix starts its workers); both must keep the same
   nodes.

Prints the date, the load, the calibration figure and a table with the ratio.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from timing import ROOT, Run, calibration, clone, machine, nox


def build_model(folder: Path, unrelated: int) -> Path:
    """buried200.onnx (and its .npz inputs) in `folder`: the pads construct among
    `unrelated` ordinary nodes."""
    import numpy as np
    import onnx
    from onnx import helper

    from compat.corpus.make import randn

    sys.path.insert(0, str(ROOT))  # tests/helpers.py, beside the installed project
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


def nox_triage(repo: Path, model: Path, state: Path, out: Path, *args: str) -> Run:
    """`nox -s triage -- MODEL --axis onnx ...` in `repo`: exit 0, a finding reduced."""
    return nox(
        repo,
        *("-s", "triage", "--", str(model), "--axis", "onnx"),
        *("--state-dir", str(state), "--out", str(out), *args),
        says=r"finding 1: .*minimal: (?!no minimal model)",
    )


def reduction(model_path: Path, state: Path, work: Path, served: bool) -> tuple[float, int, int]:
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
    envs = [existing_env(c, state / "envs") for c in (bad_cell, good_cell)]
    if None in envs:
        sys.exit("bench: the onnx 1.20.1 and 1.21.0 environments are missing after the triage")
    bad_env, good_env = envs  # type: ignore[misc]
    runs = iter(range(10**6))

    def one_off(env: Any) -> Any:
        def evaluate(case_id: str, check: str, directory: Path) -> dict[str, Any]:
            task = Task(case_id, check, str(directory))
            folder = work / f"worker{next(runs)}"
            (record,) = run_worker(env.python, [task], folder, 120.0, env.code, env.record.limits)
            return record

        return evaluate

    def found(first: dict[str, Any]) -> Finding:
        result = CheckResult.from_dict({**first, "cell": bad_cell.id})
        return Finding("shape_inference", "onnx", "fixed", bad_cell, good_cell, result)

    started = time.perf_counter()
    if served:
        with (
            ServedWorker(bad_env, work / "bad", 120) as bad,
            ServedWorker(good_env, work / "good", 120) as good,
        ):
            first = bad.run(case.id, "shape_inference", _written(case, work / "first"))
            same = SameFailure(found(first), case, work / "c", bad.run, good.run)
            reduced = reduce(model, feeds, same)
    else:
        bad_run, good_run = one_off(bad_env), one_off(good_env)
        first = bad_run(case.id, "shape_inference", _written(case, work / "first"))
        same = SameFailure(found(first), case, work / "c", bad_run, good_run)
        reduced = reduce(model, feeds, same)
    return time.perf_counter() - started, reduced.tried, len(reduced.model.graph.node)


def _written(case: Any, root: Path) -> Path:
    from compat.corpus.discover import write_case

    return write_case(case, root).directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--unrelated", type=int, default=180, help="ordinary nodes around it")
    parser.add_argument("--skip-alternative", action="store_true", help="skip comparison 2")
    args = parser.parse_args()
    print(f"started {machine()}", flush=True)
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory(prefix="compat-bench-") as tmp:
        work = Path(tmp)
        model = build_model(work, args.unrelated)
        import onnx

        nodes = len(onnx.load(str(model)).graph.node)
        repo, state = clone("HEAD", work / "ours"), work / "state"
        nox_triage(repo, model, state, work / "warm")  # environments, code and nox's venv
        calibrated = calibration(state)
        done = nox_triage(repo, model, state, work / "out", "--fresh")
        findings = json.loads((work / "out" / "triage.json").read_text())["findings"]
        minimal = ", ".join(
            f"{f['check']}: {f['minimal']['nodes']} nodes in {f['minimal']['candidates']} "
            "candidates"
            for f in findings
            if f["minimal"]
        )
        what = f"`nox -s triage -- {nodes}-node model --axis onnx --fresh`, warm environments"
        detail = f"{len(findings)} findings; {minimal}"
        rows.append((what, f"{done.seconds:.1f} s", detail, ""))
        if not args.skip_alternative:
            served = reduction(model, state, work / "served", served=True)
            one_off = reduction(model, state, work / "one-off", served=False)
            if served[2] != one_off[2]:
                sys.exit(
                    f"bench: the reductions differ: {served[2]} nodes kept by served "
                    f"workers, {one_off[2]} by one-off ones"
                )
            rows.append(
                (
                    f"the reduction of {nodes} nodes, served workers vs one process per "
                    "candidate (in this process, no nox)",
                    f"{served[0]:.1f} s ({served[1]} candidates, {served[2]} nodes kept)",
                    f"{one_off[0]:.1f} s ({one_off[1]} candidates)",
                    f"{served[0] / one_off[0]:.2f}",
                )
            )
    print(f"ended {machine()}; calibrate: {calibrated} (lower is faster)")
    print("\n| measurement | triage (HEAD) | alternative / detail | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
