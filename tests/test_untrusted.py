"""Models are untrusted (issue 23, What 1): every external-data location is checked on
the host before any cell sees the model, and the data is inlined (compat/cell/untrusted.py).

Each place a tensor can keep its data in another file — initializers, sparse
initializers' values and indices, tensor and sparse-tensor attributes, If bodies at
any depth, local functions — is tried with each way out of the model's folder
(an absolute path, `../`, a symlinked file, a symlinked folder): each is one line,
exit 2, naming the model file, the tensor and the location. The same models with
their data inside the folder load and run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from compat.cell.annotations_cli import main as annotations_main
from compat.cell.loop import run_task
from compat.cell.untrusted import model_tensors
from compat.core.errors import ConfigError, UsageError
from compat.corpus.discover import write_case
from compat.corpus.dropin import load_dropins
from compat.corpus.make import const, model, tensor
from compat.followup.triage.command import TriageRequest, load_case
from compat.workflow.request import Request
from tests.conftest import ROOT

SHAPE = np.array([2, 3], dtype=np.int64)  # Reshape's shape: [6] -> [2, 3]
INDICES = np.array([0, 1], dtype=np.int64)  # where a sparse [2] tensor keeps its values
#: the data file a model may use: SHAPE at offset 4, INDICES at offset 20
DATA = b"pad!" + SHAPE.tobytes() + INDICES.tobytes()
SHAPE_AT, INDICES_AT = (4, 16), (20, 16)
#: what a model must never read: a file outside its folder, here with usable bytes
SECRET = b"SECRET-7f3a9c" + b"\0" * 3


def point(t: onnx.TensorProto, location: str, at: tuple[int, int] = SHAPE_AT) -> None:
    """Moves the tensor's data to `location` (offset, length `at`), as onnx writes it."""
    t.ClearField("raw_data")
    t.ClearField("int64_data")
    t.data_location = onnx.TensorProto.EXTERNAL
    del t.external_data[:]
    for key, value in (("location", location), ("offset", str(at[0])), ("length", str(at[1]))):
        t.external_data.add(key=key, value=value)


def reshape(nodes: list[onnx.NodeProto], **graph: object) -> onnx.ModelProto:
    """y = Reshape(x, shape), `shape` computed by `nodes` or held by the graph."""
    built = model(
        [*nodes, helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")],
        [tensor("x", np.float32, [6])],
        [tensor("y", np.float32, [2, 3])],
        opset=13,
    )
    for key, value in graph.items():
        getattr(built.graph, key).extend(value)  # type: ignore[arg-type]
    return built


def constant(name: str = "c") -> onnx.NodeProto:
    return helper.make_node("Constant", [], ["shape"], name=name, value=const("shape", SHAPE))


def sparse_shape() -> onnx.SparseTensorProto:
    return helper.make_sparse_tensor(const("shape", SHAPE), const("", INDICES), [2])


def branch(name: str, nodes: list[onnx.NodeProto]) -> onnx.GraphProto:
    return helper.make_graph(nodes, name, [], [tensor("shape", np.int64, [2])])


def nested_if() -> onnx.ModelProto:
    """An If whose else branch holds an If whose then branch holds the Constant."""
    cond = helper.make_node(
        "Constant", [], ["cond"], name="cond", value=const("t", np.array(False))
    )
    inner = helper.make_node(
        "If",
        ["cond"],
        ["shape"],
        name="inner",
        then_branch=branch("inner_then", [constant()]),
        else_branch=branch("inner_else", [helper.make_node("Identity", ["fixed"], ["shape"])]),
    )
    outer = helper.make_node(
        "If",
        ["cond"],
        ["shape"],
        name="outer",
        then_branch=branch("outer_then", [helper.make_node("Identity", ["fixed"], ["shape"])]),
        else_branch=branch("outer_else", [inner]),
    )
    return reshape([cond, outer], initializer=[const("fixed", SHAPE)])


def in_function() -> onnx.ModelProto:
    body = helper.make_function(
        "local", "make_shape", [], ["shape"], [constant()], [helper.make_opsetid("", 13)]
    )
    built = reshape([helper.make_node("make_shape", [], ["shape"], domain="local", name="f")])
    built.functions.append(body)
    built.opset_import.append(helper.make_opsetid("local", 1))
    return built


def sparse_attribute() -> onnx.ModelProto:
    node = helper.make_node("Constant", [], ["shape"], name="c", sparse_value=sparse_shape())
    return reshape([node])


def _body(node: onnx.NodeProto, name: str) -> onnx.GraphProto:
    return next(a.g for a in node.attribute if a.name == name)


def _the_if_constant(m: onnx.ModelProto) -> onnx.TensorProto:
    inner = _body(m.graph.node[1], "else_branch").node[0]
    return _body(inner, "then_branch").node[0].attribute[0].t


#: place -> (the model, its tensor that goes external, where the message says it is, at)
Place = tuple[
    Callable[[], onnx.ModelProto],
    Callable[[onnx.ModelProto], onnx.TensorProto],
    str,
    tuple[int, int],
]
PLACES: dict[str, Place] = {
    "initializer": (
        lambda: reshape([], initializer=[const("shape", SHAPE)]),
        lambda m: m.graph.initializer[0],
        "initializer 'shape'",
        SHAPE_AT,
    ),
    "sparse initializer values": (
        lambda: reshape([], sparse_initializer=[sparse_shape()]),
        lambda m: m.graph.sparse_initializer[0].values,
        "sparse initializer 'shape' (its values)",
        SHAPE_AT,
    ),
    "sparse initializer indices": (
        lambda: reshape([], sparse_initializer=[sparse_shape()]),
        lambda m: m.graph.sparse_initializer[0].indices,
        "sparse initializer 'shape' (its indices)",
        INDICES_AT,
    ),
    "tensor attribute": (
        lambda: reshape([constant()]),
        lambda m: m.graph.node[0].attribute[0].t,
        "tensor 'shape' in attribute 'value' of node 'c'",
        SHAPE_AT,
    ),
    "sparse tensor attribute": (
        sparse_attribute,
        lambda m: m.graph.node[0].attribute[0].sparse_tensor.values,
        "sparse tensor 'shape' (its values) in attribute 'sparse_value' of node 'c'",
        SHAPE_AT,
    ),
    "nested If body": (
        nested_if,
        _the_if_constant,
        "tensor 'shape' in attribute 'value' of node 'c' in subgraph 'then_branch' of node "
        "'inner' in subgraph 'else_branch' of node 'outer'",
        SHAPE_AT,
    ),
    "function body": (
        in_function,
        lambda m: m.functions[0].node[0].attribute[0].t,
        "tensor 'shape' in attribute 'value' of node 'c' in function 'make_shape'",
        SHAPE_AT,
    ),
}


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """(the model's folder with its legit data file, the secret outside it)."""
    models, outside = tmp_path / "models", tmp_path / "outside"
    models.mkdir()
    outside.mkdir()
    (models / "weights.bin").write_bytes(DATA)
    secret = outside / "secret.bin"
    secret.write_bytes(DATA[:4] + SECRET + DATA[4 + len(SECRET) :])
    return models, secret


def escape(kind: str, models: Path, secret: Path) -> tuple[str, str]:
    """(a location leading to `secret`, why it is refused)."""
    if kind == "absolute path":
        return str(secret), "an absolute path"
    if kind == "../":
        return "../outside/secret.bin", "it climbs out of the model's folder (..)"
    if kind == "symlinked file":
        (models / "link.bin").symlink_to(secret)
        return "link.bin", f"a symlink out of the model's folder, to {secret.resolve()}"
    (models / "sub").symlink_to(secret.parent, target_is_directory=True)
    return "sub/secret.bin", f"a symlink out of the model's folder, to {secret.resolve()}"


def write(models: Path, place: str, location: str) -> Path:
    build, pick, _, at = PLACES[place]
    built = build()
    point(pick(built), location, at)
    path = models / "m.onnx"
    onnx.save(built, str(path))
    return path


def refusal(path: Path, place: str, location: str, why: str) -> str:
    where = PLACES[place][2]
    return (
        f"{path}: {where} keeps its data in {location!r}: {why}; a model's external data "
        f"must be a regular file inside its folder ({path.parent.resolve()}), so the model "
        "is refused"
    )


@pytest.mark.parametrize("kind", ["absolute path", "../", "symlinked file", "symlinked folder"])
@pytest.mark.parametrize("place", list(PLACES))
def test_data_outside_the_folder_is_refused_in_one_line_naming_model_tensor_and_path(
    place: str, kind: str, folders: tuple[Path, Path]
) -> None:
    models, secret = folders
    location, why = escape(kind, models, secret)
    path = write(models, place, location)
    with pytest.raises(ConfigError) as info:
        load_dropins(models)
    assert str(info.value) == refusal(path, place, location, why)


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("missing.bin", "no such file in the model's folder"),
        (".", "not a regular file"),
        ("", "no location is given"),
        ("a\0b", "it is not a file name (a NUL byte)"),
        ("sub/../../outside/secret.bin", "it climbs out of the model's folder (..)"),
    ],
)
def test_a_location_that_is_no_file_of_the_folder_is_refused(
    location: str, why: str, folders: tuple[Path, Path]
) -> None:
    models, _ = folders
    path = write(models, "sparse initializer values", location)
    with pytest.raises(ConfigError) as info:
        load_dropins(models)
    assert str(info.value) == refusal(path, "sparse initializer values", location, why)


def test_bytes_past_the_end_of_the_file_are_refused(folders: tuple[Path, Path]) -> None:
    models, _ = folders
    build, pick, _, _ = PLACES["initializer"]
    built = build()
    point(pick(built), "weights.bin", (30, 16))
    onnx.save(built, str(models / "m.onnx"))
    with pytest.raises(ConfigError, match="bytes 30 to 46 asked for, the file has 36;"):
        load_dropins(models)


def test_a_hostile_tensor_name_is_escaped_in_the_message(folders: tuple[Path, Path]) -> None:
    models, secret = folders
    built = reshape([], initializer=[const("shape", SHAPE)])
    built.graph.initializer[0].name = "\x1b]0;owned\x07"
    built.graph.node[0].input[1] = built.graph.initializer[0].name
    point(built.graph.initializer[0], str(secret))
    onnx.save(built, str(models / "m.onnx"))
    with pytest.raises(ConfigError) as info:
        load_dropins(models)
    assert "initializer '\\x1b]0;owned\\x07' keeps" in str(info.value)
    assert "\x1b" not in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("place", list(PLACES))
def test_data_inside_the_folder_is_inlined_and_the_model_runs(
    place: str, folders: tuple[Path, Path], tmp_path: Path
) -> None:
    models, _ = folders
    write(models, place, "weights.bin")
    _, _, cases = load_dropins(models)
    (case,) = cases
    # the model that travels to the cells keeps no external data: no cell opens a file
    for _, t in model_tensors(case.model):
        assert t.data_location == onnx.TensorProto.DEFAULT and not t.external_data
    expected = INDICES if place.endswith("indices") else SHAPE
    assert np.array_equal(numpy_helper.to_array(PLACES[place][1](case.model)), expected)
    directory = str(write_case(case, tmp_path / "staged").directory)
    result = run_task({}, {"case": case.id, "check": "ort_run", "case_dir": directory})
    assert result["outcome"] == "pass", result


def test_a_model_onnx_saved_with_external_data_is_accepted(tmp_path: Path) -> None:
    """What onnx itself writes (`save_as_external_data`) is what a user brings."""
    big = np.arange(4096, dtype=np.float32)
    built = model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        [tensor("x", np.float32, [4096])],
        [tensor("y", np.float32, [4096])],
        [const("w", big)],
        opset=13,
    )
    onnx.save(built, str(tmp_path / "m.onnx"), save_as_external_data=True, location="m.data")
    assert (tmp_path / "m.data").stat().st_size == big.nbytes
    _, _, (case,) = load_dropins(tmp_path)
    assert np.array_equal(numpy_helper.to_array(case.model.graph.initializer[0]), big)
    assert not case.model.graph.initializer[0].external_data


def test_triage_variants_and_annotations_refuse_it_too(
    folders: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from compat.cli.main import main

    models, secret = folders
    path = write(models, "sparse initializer values", str(secret))
    expected = refusal(path, "sparse initializer values", str(secret), "an absolute path")
    with pytest.raises(UsageError) as info:
        load_case(TriageRequest(Request(), path))
    assert str(info.value) == expected
    assert main(["variants", str(path), "--out", str(tmp_path / "variants")]) == 2
    assert capsys.readouterr().err == f"onnx-compat: error: {expected}\n"
    assert not (tmp_path / "variants").exists()  # refused before anything is written
    assert annotations_main([str(path)]) == 2
    assert capsys.readouterr().err == f"compat.cell annotations: error: {expected}\n"


# --- real processes: the oldest onnx of the default axis, traced with strace ---------

#: where a cell may open files besides the state directory and its Python: the system,
#: its own scratch files (tempfile's compat-*), the built-in cases of this checkout
SYSTEM = ("/usr/", "/lib/", "/lib64/", "/etc/", "/sys/", "/proc/", "/dev/")
#: the calls traced: files opened, programs run, and who started whom
TRACED = "openat,execve,clone,clone3,fork,vfork"


def oldest_cell() -> tuple[str, str]:
    from compat.plan.config import load_config

    config = load_config(ROOT / "pyproject.toml")
    return min(config.onnx.versions, key=lambda v: tuple(map(int, v.split(".")))), config.onnx.pair


def traced_matrix(tmp_path: Path, state: Path, models: Path) -> tuple[int, str, Path]:
    """`matrix` on the drop-in folder, on the oldest onnx, every process under strace:
    (exit code, stderr, the trace)."""
    import shutil

    if shutil.which("strace") is None:
        if os.environ.get("COMPAT_REQUIRE_STRACE"):  # CI installs it: missing is a failure
            pytest.fail("strace is not installed (apt-get install strace)")
        pytest.skip("strace is not installed (apt-get install strace)")
    onnx_version, ort_version = oldest_cell()
    trace = tmp_path / "trace.log"
    done = subprocess.run(
        [
            "strace",
            "-f",
            "-qq",
            "-o",
            str(trace),
            "-e",
            f"trace={TRACED}",
            sys.executable,
            "-m",
            "compat",
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(state),
            "--out",
            str(tmp_path / "out"),
            "--cases-dir",
            str(models),
            "--cases",
            f"{models.name}.*",
            "--onnx",
            onnx_version,
            "--ort",
            ort_version,
            "--cross",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    return done.returncode, done.stderr, trace


def processes(trace: Path) -> tuple[dict[int, set[str]], set[int]]:
    """(every process's opened paths, the cells' processes with their threads and children)."""
    import re

    opened: dict[int, set[str]] = {}
    children: dict[int, set[int]] = {}
    cells: set[int] = set()
    for line in trace.read_text(errors="replace").splitlines():
        pid_text, _, call = line.strip().partition(" ")
        if not pid_text.isdigit():
            continue
        pid, call = int(pid_text), call.strip()
        spawned = re.match(r"(?:<\.\.\. )?(?:clone3?|v?fork)\b.*= (\d+)$", call)
        if spawned:
            children.setdefault(pid, set()).add(int(spawned[1]))
        if call.startswith("execve(") and "/envs/" in call and '"compat.cell"' in call:
            cells.add(pid)
        path = re.match(r'openat\([^,]+, "((?:[^"\\]|\\.)*)"', call)
        if path:
            opened.setdefault(pid, set()).add(path[1])
    todo, tree = list(cells), set()
    while todo:
        pid = todo.pop()
        if pid not in tree:
            tree.add(pid)
            todo.extend(children.get(pid, ()))
    return opened, tree


@pytest.mark.envs
@pytest.mark.subprocess
def test_the_sparse_traversal_is_refused_before_any_cell_and_the_secret_reaches_no_file(
    tmp_path: Path, shared_state: Path
) -> None:
    """Issue 23's attack: a sparse initializer at an absolute path outside the folder,
    Reshape's shape read from it, put its bytes into every report."""
    models, secret = tmp_path / "leak", tmp_path / "outside" / "secret.bin"
    models.mkdir()
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    built = reshape([], sparse_initializer=[sparse_shape()])
    point(built.graph.sparse_initializer[0].values, str(secret), (0, 16))
    onnx.save(built, str(models / "m.onnx"))
    code, stderr, trace = traced_matrix(tmp_path, shared_state, models)
    expected = refusal(
        models / "m.onnx", "sparse initializer values", str(secret), "an absolute path"
    )
    assert (code, stderr) == (2, f"onnx-compat: error: {expected}\n")
    opened, cells = processes(trace)
    assert opened and not cells  # the trace worked, and no cell ever started
    assert not [pid for pid, paths in opened.items() if str(secret) in paths]  # nobody read it
    # the secret as bytes, or as the numbers Reshape's error message would print
    leaks = [SECRET[:13], *(str(n).encode() for n in np.frombuffer(SECRET, np.int64))]
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p not in (secret, trace)]
    written += [p for p in shared_state.rglob("*") if p.is_file() and "envs" not in p.parts]
    assert not [p for p in written if any(leak in p.read_bytes() for leak in leaks)]


@pytest.mark.envs
@pytest.mark.subprocess
def test_no_cell_opens_a_file_outside_its_environment_with_external_data_inside_the_folder(
    tmp_path: Path, shared_state: Path
) -> None:
    """Legit external data (a sparse initializer's values and indices, and what onnx's own
    `save_as_external_data` writes) is read by the host alone: the cells, on the oldest
    onnx, open nothing in the model's folder nor anywhere outside their environment."""
    models, secret = tmp_path / "inside", tmp_path / "outside" / "secret.bin"
    models.mkdir()
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    (models / "weights.bin").write_bytes(DATA)
    built = reshape([], sparse_initializer=[sparse_shape()])
    point(built.graph.sparse_initializer[0].values, "weights.bin", SHAPE_AT)
    point(built.graph.sparse_initializer[0].indices, "weights.bin", INDICES_AT)
    onnx.save(built, str(models / "sparse.onnx"))
    onnx.save(
        reshape([], initializer=[const("shape", SHAPE)]),
        str(models / "saved.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        size_threshold=0,
        location="saved.data",
    )
    code, stderr, trace = traced_matrix(tmp_path, shared_state, models)
    report = json.loads((tmp_path / "out" / "matrix.json").read_text())
    runs = {r["case"]: r["outcome"] for r in report["results"] if r["check"] == "ort_run"}
    assert code in (0, 1) and runs == {"inside.sparse": "pass", "inside.saved": "pass"}, stderr
    opened, cells = processes(trace)
    host = set().union(*(paths for pid, paths in opened.items() if pid not in cells))
    # the trace sees the data files opened: by the host, which inlines them
    assert {str(models / "weights.bin"), str(models / "saved.data")} <= host
    env = shared_state / "envs" / f"onnx{oldest_cell()[0]}-ort{oldest_cell()[1]}"
    base = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import sys; print(sys.base_prefix)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    import tempfile

    allowed = (
        f"{shared_state.resolve()}/",
        f"{base}/",
        f"{ROOT}/",
        f"{Path(tempfile.gettempdir()) / 'compat-'}",
        *SYSTEM,
    )
    assert cells, "no cell process found in the trace"
    by_cells = set().union(*(opened.get(pid, set()) for pid in cells))
    assert any("/cases/inside.sparse-" in p for p in by_cells)  # the staged copy, not ours
    outside = sorted(p for p in by_cells if not p.startswith(allowed))
    assert not outside, f"cells opened files outside their environment: {outside[:10]}"
    assert not [p for p in by_cells if p.startswith(str(tmp_path))]
