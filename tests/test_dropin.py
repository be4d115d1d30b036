"""Drop-in model directories: cases without a hand-written oracle."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from compat.cell.loop import run_task
from compat.core.case import KnownFailure
from compat.core.errors import ConfigError
from compat.corpus.discover import write_case
from compat.corpus.dropin import load_dropins
from compat.corpus.make import model, tensor
from tests.conftest import ROOT
from tests.helpers import add_one_model

EXAMPLES = ROOT / "examples" / "models"


def save(m: object, path: Path) -> Path:
    onnx.save(m, str(path))  # type: ignore[arg-type]
    return path


def identity_model(x_dims: list[int | str], y_dims: list[int | str]) -> onnx.ModelProto:
    """y = Identity(x), with whatever annotations the test wants to break."""
    return model(
        [helper.make_node("Identity", ["x"], ["y"])],
        [tensor("x", np.float32, x_dims)],
        [tensor("y", np.float32, y_dims)],
    )


def two_inputs_model() -> onnx.ModelProto:
    """y = x + b, x [batch, 3] and b [batch, 3]: one dim_param across two inputs."""
    return model(
        [helper.make_node("Add", ["x", "b"], ["y"])],
        [tensor("x", np.float32, ["batch", 3]), tensor("b", np.float32, ["batch", 3])],
        [tensor("y", np.float32, ["batch", 3])],
    )


def error_of(directory: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_dropins(directory)
    message = str(info.value)
    assert "\n" not in message  # one line
    return message


def test_every_model_becomes_a_case_with_the_checks_that_need_no_oracle() -> None:
    family, description, cases = load_dropins(EXAMPLES)
    assert family == "models" and "examples/models" in description
    assert [c.id for c in cases] == [
        "models.layer_norm",
        "models.reshape_batch",
        "models.wrong_output_annotation",
    ]
    assert all("ort_optimized" not in c.checks and "annotations" in c.checks for c in cases)
    layer_norm = cases[0]
    saved = np.load(EXAMPLES / "layer_norm.npz")["x"]
    assert np.array_equal(layer_norm.inputs["x"], saved)  # the npz beside it
    assert cases[1].inputs["x"].shape == (2, 4, 8)  # generated from [batch, 4, 8]


@pytest.mark.parametrize("check", ["ort_run", "reference"])
def test_runtimes_are_compared_with_onnxruntime_unoptimized(check: str, tmp_path: Path) -> None:
    _, _, cases = load_dropins(EXAMPLES)
    directory = str(write_case(cases[0], tmp_path).directory)
    result = run_task({}, {"case": "c", "check": check, "case_dir": directory})
    assert result["outcome"] == "pass", result
    assert "onnxruntime's with optimizations disabled" in result["detail"]


def test_a_directory_without_models_is_an_error(tmp_path: Path) -> None:
    assert "no *.onnx models" in error_of(tmp_path)


def test_an_unreadable_model_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.onnx").write_text("nope")
    assert "broken.onnx: not a readable ONNX model" in error_of(tmp_path)


@pytest.mark.parametrize("keep", [60, 2, 11, 317])
def test_a_truncated_model_is_one_clear_line(tmp_path: Path, keep: int) -> None:
    """Cut mid-field protobuf refuses to parse; cut at a field boundary it parses into
    a model that lost its tail (2, 11 and 317 bytes of layer_norm.onnx do): both named."""
    data = (EXAMPLES / "layer_norm.onnx").read_bytes()
    (tmp_path / "cut.onnx").write_bytes(data[:keep])
    message = error_of(tmp_path)
    assert message.startswith(f"{tmp_path / 'cut.onnx'}: not a ")
    assert "truncated" in message and message.endswith("export or copy it again")


def test_an_npz_without_an_input_is_named(tmp_path: Path) -> None:
    save(add_one_model(), tmp_path / "m.onnx")
    np.savez(tmp_path / "m.npz")
    assert f"{tmp_path / 'm.npz'}: missing input 'x'" in error_of(tmp_path)


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        (
            {"x": np.zeros(2, np.float64)},
            "m.npz: input 'x' is float64, the model declares float32 (tensor(float)); "
            "save it as float32",
        ),
        (
            {"x": np.zeros(2, np.float32), "X": np.zeros(2, np.float32)},
            "m.npz: 'X' is not an input of the model (its inputs: x); "
            "name each array after the input it feeds",
        ),
        (
            {"x": np.zeros(3, np.float32)},
            "m.npz: input 'x' has shape (3,), the model declares [2]: axis 0 must be 2, not 3",
        ),
        (
            {"x": np.zeros((2, 1), np.float32)},
            "m.npz: input 'x' has shape (2, 1), the model declares [2]; give it 1 axes",
        ),
    ],
)
def test_inputs_that_do_not_fit_the_declared_inputs_are_one_error(
    tmp_path: Path, arrays: dict[str, np.ndarray], message: str
) -> None:
    save(add_one_model(), tmp_path / "m.onnx")  # x: float32 [2]
    np.savez(tmp_path / "m.npz", **arrays)  # type: ignore[arg-type]
    got = error_of(tmp_path)
    assert got == f"{tmp_path}/{message}"


def test_one_dim_param_at_two_sizes_is_judged_in_the_cell_never_a_refused_folder(
    tmp_path: Path,
) -> None:
    """onnxruntime runs inputs that break a dim_param's binding (paddle2onnx writes "?" on
    every unknown axis): the folder loads, and `annotations` names the precondition."""
    save(two_inputs_model(), tmp_path / "m.onnx")
    x, b = np.zeros((2, 3), np.float32), np.zeros((4, 3), np.float32)
    np.savez(tmp_path / "m.npz", x=x, b=b)
    (case,) = load_dropins(tmp_path)[2]
    directory = str(write_case(case, tmp_path / "work").directory)
    record = run_task({}, {"case": case.id, "check": "annotations", "case_dir": directory})
    assert record["outcome"] == "fail"
    assert (
        "input 'b' (a precondition) axis 0: declared batch = 2 (bound by 'x' axis 0), "
        "actual 4" in record["detail"]
    )


def test_an_npz_that_is_not_a_zip_is_named(tmp_path: Path) -> None:
    save(add_one_model(), tmp_path / "m.onnx")
    np.save(tmp_path / "m.npy", np.zeros(2, np.float32))
    (tmp_path / "m.npy").rename(tmp_path / "m.npz")  # a .npy, not an .npz
    assert error_of(tmp_path) == (
        f"{tmp_path / 'm.npz'}: not an .npz archive (not a zip file, or a truncated one); "
        "write it with numpy.savez(path, name=array, ...)"
    )


def test_several_runs_travel_to_the_cell_and_each_is_judged(tmp_path: Path) -> None:
    """m.npz, m.1.npz, m.2.npz are three runs; the third breaks y's declared axis."""
    save(identity_model(["batch", "n"], ["batch", 3]), tmp_path / "m.onnx")
    for name, n in (("m.npz", 3), ("m.1.npz", 3), ("m.2.npz", 5)):
        np.savez(tmp_path / name, x=np.ones((2, n), np.float32))
    _, _, (case,) = load_dropins(tmp_path)
    assert case.description == "drop-in m.onnx with m.npz, m.1.npz, m.2.npz"
    assert [r["x"].shape for r in case.extra_runs] == [(2, 3), (2, 5)]
    directory = str(write_case(case, tmp_path / "work").directory)
    result = run_task({}, {"case": case.id, "check": "annotations", "case_dir": directory})
    assert result["outcome"] == "fail", result
    assert "run 3" in result["detail"] and "run 1" not in result["detail"], result


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (
            ["m.1.npz"],
            "m.1.npz: a further run, but the first run's inputs are missing; put them in m.npz",
        ),
        (["m.npz", "m.2.npz"], "m.2.npz: runs are numbered without gaps, and m.1.npz is missing"),
        (["m.npz", "m.01.npz"], "m.01.npz: number further runs 1, 2, …, like m.1.npz, m.2.npz"),
    ],
)
def test_runs_are_numbered_from_the_first_without_gaps(
    tmp_path: Path, names: list[str], message: str
) -> None:
    save(add_one_model(), tmp_path / "m.onnx")
    for name in names:
        np.savez(tmp_path / name, x=np.ones(2, np.float32))
    assert error_of(tmp_path) == f"{tmp_path}/{message}"


def test_a_generated_input_that_is_not_float_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """silero-vad's int64 `sr` would get 0-4 as a sample rate: say so, name the fix."""
    vad = model(
        [helper.make_node("Identity", ["x"], ["y"])],
        [tensor("x", np.float32, ["batch", 4]), tensor("sr", np.int64, [])],
        [tensor("y", np.float32, ["batch", 4])],
    )
    save(vad, tmp_path / "vad.onnx")
    load_dropins(tmp_path)
    err = capsys.readouterr().err
    assert err == (
        f"onnx-compat: warning: {tmp_path / 'vad.onnx'}: input 'sr' (tensor(int64)) gets "
        "generated values (random integers 0–4), which may mean nothing to the model; "
        "add it to vad.npz\n"
    )  # and nothing about the float input x
    np.savez(tmp_path / "vad.npz", x=np.ones((1, 4), np.float32), sr=np.array(16000))
    load_dropins(tmp_path)
    assert capsys.readouterr().err == ""


def test_a_folder_compat_toml_records_known_failures_by_model_file_name(tmp_path: Path) -> None:
    save(add_one_model(), tmp_path / "first.onnx")
    save(add_one_model(), tmp_path / "second.onnx")
    (tmp_path / "compat.toml").write_text(
        '[[known]]\ncases = "sec*.onnx"\npackage = "onnxruntime"\nversions = "<1.20"\n'
        'checks = ["ort_run"]\noutcomes = ["crash"]\nreason = "segfaults"\n'
        'link = "https://github.com/microsoft/onnxruntime/issues/1"\n'
    )
    _, _, (first, second) = load_dropins(tmp_path)
    assert first.known == ()
    assert second.known == (
        KnownFailure(
            "onnxruntime",
            "<1.20",
            ("ort_run",),
            "segfaults",
            "https://github.com/microsoft/onnxruntime/issues/1",
            ("crash",),
        ),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[known]]\ncases = "m.onnx"\npackage = "onnx"\nchecks = ["checker"]\n'
            'reason = "r"\nlinks = "x"\n',
            "compat.toml: unknown key 'links' in [known #1]; allowed keys are cases, checks, "
            "link, match, outcomes, package, phase, raises, reason, versions",
        ),
        (
            "timeout = 3\n",
            "compat.toml: unknown key 'timeout' in compat.toml; allowed keys are atol, known, "
            "rtol, tolerance",
        ),
        (
            '[[known]]\ncases = "tmp.m"\npackage = "onnx"\nchecks = ["checker"]\nreason = "r"\n',
            "compat.toml [known #1]: cases 'tmp.m' matches no model file in",
        ),
        (
            '[[known]]\ncases = "*"\npackage = "onnx"\nchecks = ["ort_optimized"]\nreason = "r"\n',
            "compat.toml [known #1]: check 'ort_optimized' is not a check of the cases '*' "
            "matches; use one of annotations,",
        ),
        (
            '[[known]]\ncases = "*"\npackage = "onnx"\nchecks = ["checker"]\nreason = "r"\n'
            'outcomes = ["skip"]\n',
            "compat.toml: [known #1] outcomes = ['skip']: outcomes must list outcomes a known "
            "failure can absorb: fail, error, crash, timeout, flaky",
        ),
        ("[[known]]\ncases = \n", "compat.toml: cannot read it: "),
    ],
)
def test_a_bad_folder_compat_toml_is_one_error_naming_it(
    tmp_path: Path, text: str, message: str
) -> None:
    save(add_one_model(), tmp_path / "m.onnx")
    (tmp_path / "compat.toml").write_text(text)
    got = error_of(tmp_path)
    assert got.startswith(str(tmp_path / message.split(" ", 1)[0].rstrip(":")))
    assert message in got


def test_an_npz_for_no_model_is_flagged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    save(add_one_model(), tmp_path / "m.onnx")
    np.savez(tmp_path / "typo.npz", x=np.ones(2, np.float32))
    load_dropins(tmp_path)
    assert f"warning: {tmp_path / 'typo.npz'}: belongs to no model here" in capsys.readouterr().err


def test_the_written_case_carries_each_run_as_runk_keys(tmp_path: Path) -> None:
    save(add_one_model(), tmp_path / "m.onnx")
    for name, value in (("m.npz", 1.0), ("m.1.npz", 2.0)):
        np.savez(tmp_path / name, x=np.full(2, value, np.float32))
    _, _, (case,) = load_dropins(tmp_path)
    files = write_case(case, tmp_path / "work")
    with np.load(files.directory / "data.npz") as data:
        assert sorted(data.files) == ["in.x", "run1.x"]
        assert data["run1.x"].tolist() == [2.0, 2.0]
    assert json.loads((files.directory / "case.json").read_text())["oracle"] == "onnxruntime"


def test_an_input_the_generator_cannot_fill_names_the_npz_to_write(tmp_path: Path) -> None:
    labels = model(
        [helper.make_node("Identity", ["s"], ["y"])],
        [tensor("s", np.str_, [2])],
        [tensor("y", np.str_, [2])],
    )
    save(labels, tmp_path / "labels.onnx")
    assert error_of(tmp_path) == (
        f"{tmp_path / 'labels.onnx'}: input 's' (tensor(string)) cannot be generated; "
        "put the inputs in labels.npz"
    )
    np.savez(tmp_path / "labels.npz", s=np.array(["a", "b"]))
    (case,) = load_dropins(tmp_path)[2]
    assert case.inputs["s"].tolist() == ["a", "b"]


def test_a_negative_dim_value_as_paddle2onnx_writes_it_takes_any_size(tmp_path: Path) -> None:
    """`[-1, 3, "?", "?"]`: onnxruntime runs it on 1×3×48×192; so does a drop-in folder,
    with the inputs given and with none (generated)."""
    save(identity_model([-1, 3, "h", "w"], [-1, 3, "h", "w"]), tmp_path / "m.onnx")
    np.savez(tmp_path / "m.npz", x=np.ones((1, 3, 48, 192), np.float32))
    (case,) = load_dropins(tmp_path)[2]
    assert case.inputs["x"].shape == (1, 3, 48, 192)
    (tmp_path / "m.npz").unlink()
    (case,) = load_dropins(tmp_path)[2]
    assert all(size > 0 for size in case.inputs["x"].shape)


def grid_sample(size: int) -> onnx.ModelProto:
    """GridSample of an 8×8 image at size×size points: onnxruntime runs it in
    milliseconds; onnx's reference evaluator loops in Python, ~100 µs a point."""
    return model(
        [helper.make_node("GridSample", ["x", "grid"], ["y"])],
        [tensor("x", np.float32, [1, 1, 8, 8]), tensor("grid", np.float32, [1, size, size, 2])],
        [tensor("y", np.float32, [1, 1, size, size])],
        opset=16,
    )


@pytest.mark.envs
def test_a_slow_reference_evaluator_is_a_skip_naming_its_time_and_decides_nothing_else(
    tmp_path: Path, shared_state: Path
) -> None:
    from compat.cli.main import main

    models = tmp_path / "slow"
    models.mkdir()
    save(grid_sample(512), models / "grid.onnx")  # ~26 s in the reference, 0.1 s in ort
    out = tmp_path / "out"
    args = [
        "matrix",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--state-dir",
        str(shared_state),
        "--out",
        str(out),
        "--cases-dir",
        str(models),
        "--cases",
        "slow.*",
        "--onnx",
        "1.23.2",
        "--ort",
        "1.24.4",
        "--cross",
        "--timeout",
        "5",
    ]
    code = main(args)
    report = json.loads((out / "matrix.json").read_text())
    got = {r["check"]: r for r in report["results"]}
    assert code == 0, got
    assert got["ort_run"]["outcome"] == "pass"  # onnxruntime alone decides it
    assert got["ort_run"]["detail"] == (
        "outputs match onnxruntime's with optimizations disabled at levels disabled, basic, "
        "extended, all"
    )
    slow = "onnx's reference evaluator (onnx 1.23.2) did not finish"
    for check in ("reference", "annotations_builtin"):
        assert got[check]["outcome"] == "skip", got[check]
        assert got[check]["detail"].startswith(slow) and " in 5 s" in got[check]["detail"]
    # once it ran out of time in a cell, the same evaluator on the model is not run again
    assert sum("so this was not run" in r["detail"] for r in got.values()) >= 1
    assert got["annotations"]["outcome"] == "pass"  # onnxruntime observed every value
    assert f"not observed by reference: {slow}" in got["annotations"]["detail"]
    # too slow here is no verdict to keep: the next run tries again
    again = main(args)
    report = json.loads((out / "matrix.json").read_text())
    origins = {r["check"]: r["origin"] for r in report["results"]}
    assert again == 0 and origins["reference"] == "" and origins["checker"] == "cache"


def test_a_fifo_or_a_folder_named_like_a_model_is_skipped_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO would hang even `--list` on its first read."""
    import os

    save(add_one_model(), tmp_path / "m.onnx")
    os.mkfifo(tmp_path / "pipe.onnx")
    os.mkfifo(tmp_path / "m.1.npz")
    (tmp_path / "dir.onnx").mkdir()
    family, _, cases = load_dropins(tmp_path)
    assert [c.id for c in cases] == [f"{family}.m"]
    err = capsys.readouterr().err
    assert f"{tmp_path / 'pipe.onnx'}: not a regular file" in err
    assert f"{tmp_path / 'dir.onnx'}: not a regular file" in err
