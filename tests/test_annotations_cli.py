"""`python -m compat annotations`: verdicts, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from compat.cell.annotations_cli import main
from compat.core.case import Case
from compat.core.install import InstallRequest
from compat.corpus.discover import discover_cases
from compat.execute.envs import ensure_env
from compat.plan.config import load_config
from compat.plan.matrix import Cell, requirements
from tests.conftest import ROOT

SUITE = [c for c in discover_cases(ROOT / "cases").cases if c.family == "annotations"]


def write_suite(case: Case, root: Path) -> tuple[Path, list[Path]]:
    """The case's model and one npz per run, keyed by input name as the CLI expects."""
    folder = root / case.id
    folder.mkdir(parents=True)
    model = folder / "model.onnx"
    model.write_bytes(case.model.SerializeToString())
    feeds = []
    for index, run in enumerate((case.inputs, *case.extra_runs)):
        path = folder / f"run{index}.npz"
        np.savez(path, **run)  # type: ignore[arg-type]
        feeds.append(path)
    return model, feeds


def test_the_suite_covers_every_rule() -> None:
    ids = {c.id.split(".", 1)[1] for c in SUITE}
    assert {
        "shared_consistent",
        "shared_inconsistent_violated",
        "bound_at_intermediate",
        "output_violated",
        "dim_value_violated",
        "anonymous_dims",
        "unknown_rank",
        "rank_zero",
        "rank_violated",
        "dtype_violated",
        "zero_size",
        "if_branch_shared",
        "if_branch_violated",
        "two_runs",
    } <= ids


@pytest.mark.parametrize("runtime", ["ort", "reference"])
@pytest.mark.parametrize("case", SUITE, ids=lambda c: c.id)
def test_the_verdict_on_the_host_release(
    case: Case, runtime: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, feeds = write_suite(case, tmp_path)
    args = [str(model), "--runtime", runtime, "--json"]
    for path in feeds:
        args += ["--inputs", str(path)]
    code = main(args)
    report = json.loads(capsys.readouterr().out)
    assert_verdict(case, runtime, code, report)


def assert_verdict(case: Case, runtime: str, code: int, report: dict) -> None:  # type: ignore[type-arg]
    assert len(report["runs"]) == 1 + len(case.extra_runs)
    for run in report["runs"]:
        found = sorted(
            f"{v['value']}:{v['axis'] if v['axis'] is not None else kind(v)}"
            for v in run["violations"]
        )
        expected = sorted(k for k in case.violations if k.split(":")[0] not in run["unchecked"])
        assert found == expected, (runtime, run)
    assert code == (1 if any(not r["ok"] for r in report["runs"]) else 0)
    assert report["ok"] == (code == 0)


def kind(violation: dict) -> str:  # type: ignore[type-arg]
    return "rank" if violation["declared"].startswith("rank") else "dtype"


def test_the_text_output_names_the_violating_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (case,) = [c for c in SUITE if c.id == "annotations.output_violated"]
    model, feeds = write_suite(case, tmp_path)
    assert main([str(model), "--inputs", str(feeds[0])]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"run 1 ({feeds[0]}, ort): 1 violation (bindings: N=2)",
        "  value 'y' axis 0: declared N = 2 (bound by 'x' axis 0), actual 4",
        "annotations violated",
    ]


def test_generated_inputs_use_dim_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (case,) = [c for c in SUITE if c.id == "annotations.shared_consistent"]
    model, _ = write_suite(case, tmp_path)
    assert main([str(model), "--dim", "N=7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["bindings"] == {"N": 7}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope.onnx"], "nope.onnx: no such file"),
        (["{d}/junk.onnx"], "junk.onnx: not a readable ONNX model"),
        (["{d}/m.onnx", "--inputs", "{d}/missing.npz"], "missing.npz: missing input 'x'"),
        (["{d}/m.onnx", "--inputs", "{d}/extra.npz"], "extra.npz: 'z' is not an input"),
        (["{d}/m.onnx", "--inputs", "{d}/junk.onnx"], "junk.onnx: not an npz archive"),
        (["{d}/m.onnx", "--inputs", "{d}/absent.npz"], "absent.npz: no such file"),
        (["{d}/m.onnx", "--dim", "N"], "--dim N: write NAME=SIZE"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (case,) = [c for c in SUITE if c.id == "annotations.two_runs"]
    (tmp_path / "m.onnx").write_bytes(case.model.SerializeToString())
    (tmp_path / "junk.onnx").write_text("not a model")
    np.savez(tmp_path / "missing.npz", other=np.zeros(2))
    np.savez(tmp_path / "extra.npz", x=np.zeros(2, np.float32), z=np.zeros(2))
    code = main([a.format(d=tmp_path) for a in args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


@pytest.mark.envs
@pytest.mark.parametrize("onnx_version", ["1.14.1", "1.23.2"])
def test_the_cli_inside_real_environments_of_the_oldest_and_newest_onnx(
    onnx_version: str, tmp_path: Path
) -> None:
    config = load_config(ROOT / "pyproject.toml")
    ort = config.onnx.pair
    cell = Cell(
        onnx_version, ort, InstallRequest(requirements(onnx_version, ort, config.constraints))
    )
    env = ensure_env(cell, tmp_path / "envs")
    assert env.record.packages["onnx"] == onnx_version

    def run(job: tuple[Case, str]) -> None:
        case, runtime = job
        model, feeds = write_suite(case, tmp_path / runtime)
        args = [
            str(env.python),
            "-m",
            "compat",
            "annotations",
            str(model),
            "--json",
            "--runtime",
            runtime,
        ] + [a for f in feeds for a in ("--inputs", str(f))]
        done = subprocess.run(
            args,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert done.returncode in (0, 1), done.stderr
        assert_verdict(case, runtime, done.returncode, json.loads(done.stdout))

    jobs = [(case, runtime) for case in SUITE for runtime in ("ort", "reference")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(run, jobs))
