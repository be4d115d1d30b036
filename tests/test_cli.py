"""The command line: the plan, usage errors as one line with exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from compat.cli.commands import COMMANDS
from compat.cli.main import main
from tests.conftest import ROOT


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["matrix", "--config", str(ROOT / "pyproject.toml"), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_the_resolved_plan_without_running(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--list", "--onnx", "1.18.0", "--ort", "1.17.3", "--cases", "pad_*")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "2 cells × 2 cases (14 checks per cell, 28 in all)"
    assert "  onnx1.18.0-ort1.24.4         onnx==1.18.0 onnxruntime==1.24.4 numpy protobuf" in lines
    assert any(line.startswith("  onnx1.23.2-ort1.17.3") and "numpy<2" in line for line in lines)
    assert any(line.startswith("  pad_pads_from_constant.value_ints ") for line in lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--cases", "nothing_like_this*"), "--cases 'nothing_like_this*' matches no case"),
        (("--onnx", "1.18,next"), "--onnx: 'next' is not a version"),
        (("--cells", "onnx9*"), "--cells onnx9* matches no cell"),
        (("--jobs", "0"), "--jobs 0: give at least 1"),
        (("--jobs", "-2"), "--jobs -2: give at least 1"),
        (("--timeout", "-1"), "--timeout -1: give a positive number of seconds"),
        (("--timeout", "0"), "--timeout 0: give a positive number of seconds"),
        (("--timeout", "nan"), "--timeout nan: give a positive number of seconds"),
        (("--python", "/no/such/python"), "--python /no/such/python: no such interpreter"),
        (("--cases-dir", "/no/such/dir"), "/no/such/dir: drop-in model directory not found"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_an_unknown_config_key_names_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text((ROOT / "pyproject.toml").read_text().replace("timeout = 60", "timeuot = 60"))
    code = main(["matrix", "--config", str(config), "--list", "--corpus", str(ROOT / "cases")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{config}: unknown key 'timeuot' in [tool.compat]" in err


def test_argparse_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["matrix", "--no-such-flag"])
    assert info.value.code == 2


def test_annotations_is_dispatched_to_the_in_cell_cli_with_all_its_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["annotations", "--help"])
    assert exited.value.code == 0
    assert "--runtime" in capsys.readouterr().out
    model = str(ROOT / "examples" / "models" / "wrong_output_annotation.onnx")
    assert main(["annotations", model, "--dim", "batch=2", "--dim", "seq=3"]) == 1


@pytest.mark.parametrize("flag", ["--out", "--state-dir"])
@pytest.mark.parametrize("below", [False, True])
def test_an_output_directory_that_is_a_file_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, below: bool
) -> None:
    existing = tmp_path / "results.txt"
    existing.write_text("not a directory")
    target = existing / "sub" if below else existing
    code, out, err = run(capsys, flag, str(target), "--list")  # even a plan-only run
    assert code == 2 and out == ""
    which = str(existing) if below else "it"
    assert err == (
        f"onnx-compat: error: {flag} {target}: {which} is a file, not a directory; "
        "give a directory (it is created when missing)\n"
    )


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("repro", ("onnx==1.18.0", "--timeout", "0")),
        ("bisect", ("--case", "c", "--check", "k", "--package", "onnx", "--jobs", "0")),
        ("scoreboard", ("--timeout", "-5")),
        ("merge", ("somewhere", "--out", str(ROOT / "pyproject.toml"))),
    ],
)
def test_every_command_refuses_nonsense_options_the_same_way(
    capsys: pytest.CaptureFixture[str], command: str, args: tuple[str, ...]
) -> None:
    code = main([command, *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("onnx-compat: error: --") and err.count("\n") == 1


def test_bad_drop_in_inputs_exit_2_with_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    models = ROOT / "examples" / "models"
    for name in ("layer_norm.onnx", "layer_norm.npz"):
        (tmp_path / name).write_bytes((models / name).read_bytes())
    x = np.load(models / "layer_norm.npz")["x"]
    np.savez(tmp_path / "layer_norm.npz", x=x.astype(np.float64))
    code, out, err = run(capsys, "--cases-dir", str(tmp_path), "--list")
    assert code == 2 and out == ""
    assert err == (
        f"onnx-compat: error: {tmp_path / 'layer_norm.npz'}: input 'x' is float64, the model "
        "declares float32 (tensor(float)); save it as float32\n"
    )
    (tmp_path / "layer_norm.npz").write_bytes(b"PK\x03\x04 cut short")
    code, _, err = run(capsys, "--cases-dir", str(tmp_path), "--list")
    assert code == 2 and "layer_norm.npz: not an .npz archive" in err and err.count("\n") == 1


# -- what a command imports: `--help` and the plan stay quick -------------------------

IMPORTS = """\
import sys
from compat.cli.commands import COMMANDS
from compat.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("MODULES", *sorted(sys.modules), file=sys.stderr)
"""


def imported_by(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after `onnx-compat ARGV` (in this checkout)."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS, *argv], cwd=ROOT, capture_output=True, text=True
    )
    last = done.stderr.splitlines()[-1].split()
    assert last[0] == "MODULES", done.stderr
    return set(last[1:])


def _commands(modules: set[str]) -> set[str]:
    return {m.rsplit(".", 1)[1] for m in modules if m.startswith("compat.cli.commands.")}


def _heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in ("onnx", "onnxruntime")}


@pytest.mark.subprocess
def test_the_list_of_commands_imports_no_command_and_no_onnx() -> None:
    modules = imported_by("--help")
    assert _commands(modules) == set()
    assert _heavy(modules) == set()


@pytest.mark.subprocess
@pytest.mark.parametrize("name", sorted(set(COMMANDS) - {"annotations"}))
def test_a_command_s_help_imports_that_command_only(name: str) -> None:
    modules = imported_by(name, "--help")
    assert _commands(modules) == {name}
    assert _heavy(modules) == set()


@pytest.mark.subprocess
def test_the_plan_comes_from_the_config_alone_without_onnx() -> None:
    modules = imported_by("plan", "--config", str(ROOT / "pyproject.toml"))
    assert "compat.plan.matrix" in modules  # it did plan
    assert _heavy(modules) == set()


@pytest.mark.subprocess
def test_listing_the_matrix_loads_the_cases_once_then_imports_no_onnx(tmp_path: Path) -> None:
    """`matrix --list` prints the cases, and the case modules build their models with
    onnx (a second to import): the first listing loads them, onnxruntime never; the next
    one, with nothing changed, is read back and imports no onnx at all
    (compat/state/listing.py)."""
    state = ["--state-dir", str(tmp_path / "state")]
    listing = ("matrix", "--list", "--config", str(ROOT / "pyproject.toml"), *state)
    first = imported_by(*listing)
    assert "compat.corpus.discover" in first  # it loaded the case modules
    assert not {m for m in first if m.split(".")[0] == "onnxruntime"}
    again = imported_by(*listing)
    assert "compat.workflow.listing" in again and _heavy(again) == set()


@pytest.mark.subprocess
def test_a_remembered_listing_follows_the_case_modules_and_the_options(tmp_path: Path) -> None:
    """A listing is read back only while every source is as it was: a new case module,
    a removed one, or another --cases glob lists anew, as loading the corpus would."""
    corpus = tmp_path / "cases"
    corpus.mkdir()
    source = (ROOT / "cases" / "squeeze_empty_axes.py").read_text()
    (corpus / "squeeze_empty_axes.py").write_text(source)
    base = [
        "matrix",
        "--list",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--corpus",
        str(corpus),
        "--state-dir",
        str(tmp_path / "state"),
    ]

    def cases(*more: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "compat", *base, *more],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return [line.split()[0] for line in out.split("cases:\n", 1)[1].splitlines()]

    first = cases()
    assert first and all(c.startswith("squeeze_empty_axes.") for c in first)
    assert cases() == first  # read back
    (corpus / "split_empty_split.py").write_text(
        (ROOT / "cases" / "split_empty_split.py").read_text()
    )
    both = cases()
    assert any(c.startswith("split_empty_split.") for c in both) and set(first) < set(both)
    assert cases("--cases", "split_*") == [c for c in both if c.startswith("split_empty_split.")]
    (corpus / "split_empty_split.py").unlink()
    assert cases() == first


@pytest.mark.subprocess
def test_output_cut_short_by_its_reader_is_no_error() -> None:
    """`onnx-compat plan | head -1`: the reader closes the pipe early (here before the
    first line: `true` reads nothing); no traceback, exit 0."""
    command = f"{sys.executable} -m compat plan --config {ROOT / 'pyproject.toml'} | true"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], cwd=ROOT, capture_output=True, text=True
    )
    assert done.stderr == "", done.stderr
    assert done.returncode == 0
