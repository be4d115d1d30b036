"""A cell's install request (compat/core/install.py): typed fields, stored as the strings
reports always held, and turned into uv's arguments in compat/execute/installer.py alone.
Before it, a cell's requirements mixed pins with `-e PATH`, `--index-url URL`,
`--extra-index-url URL` and `--project PATH[extras]`, read back by prefix in several
modules (a `startswith("--")` once took `--project` for an index: 21 cells shown as
install-error instead of no-wheel)."""

from __future__ import annotations

import ast
import gzip
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compat.core.errors import CompatError
from compat.core.install import InstallRequest, Project
from compat.core.outcomes import CellRecord, CellState
from compat.core.report import read_json
from compat.execute.installer import install_args, install_commands
from compat.plan.config import load_config
from compat.plan.matrix import expand
from tests.conftest import ROOT

PINS = st.sampled_from(
    [
        "onnx==1.18.0",
        "onnxruntime==1.24.4",
        "numpy",
        "numpy<2",
        "ml_dtypes[x]>=0.5",
        "protobuf>=5; python_version >= '3.9'",
        "tool @ https://example.org/tool-1.0.tar.gz",
    ]
)
PATHS = st.from_regex(r"/[a-z][a-z _-]{0,8}(/[a-z]{1,5}){0,2}", fullmatch=True).map(Path)
URLS = st.from_regex(r"https://[a-z]{1,8}\.example/simple/?", fullmatch=True)
EXTRAS = st.lists(st.sampled_from(["test", "docs", "plot"]), unique=True, max_size=2)
REQUESTS = st.builds(
    InstallRequest,
    pins=st.lists(PINS, unique=True, max_size=4).map(tuple),
    project=st.none() | st.builds(Project, PATHS, EXTRAS.map(tuple)),
    editables=st.lists(PATHS, max_size=2).map(tuple),
    index_url=st.just("") | URLS,
    extra_index_urls=st.lists(URLS, max_size=2).map(tuple),
)


@given(REQUESTS)
def test_a_request_survives_its_stored_form_and_a_report(request: InstallRequest) -> None:
    assert InstallRequest.from_strings(request.serialize()) == request
    cell = CellRecord("c", "1.18.0", "1.24.4", CellState.READY, requirements=request)
    stored = json.loads(json.dumps(cell.serialize()))
    assert stored["requirements"] == request.serialize()  # a list of strings, as ever
    assert CellRecord.from_dict(stored) == cell


def test_the_stored_form_is_the_strings_older_reports_hold() -> None:
    request = InstallRequest(
        ("onnx==1.18.0", "numpy<2"),
        Project(Path("/x/my proj"), ("test", "plot")),
        (Path("/x/lib"),),
        "https://mirror.example/simple",
        ("https://nightly.example/simple",),
    )
    assert request.serialize() == [
        "onnx==1.18.0",
        "numpy<2",
        "--project /x/my proj[test,plot]",
        "-e /x/lib",
        "--index-url https://mirror.example/simple",
        "--extra-index-url https://nightly.example/simple",
    ]
    # an older list, its indexes before its project: the same request
    older = [*request.serialize()[:2], *request.serialize()[3:], request.serialize()[2]]
    assert InstallRequest.from_strings(older) == request
    assert InstallRequest.from_strings(["--project /x/y"]).project == Project(Path("/x/y"))


def test_the_stored_reports_load_as_they_were_written() -> None:
    """docs/*.json.gz: every cell's requirements read into a request and written back
    are the very strings stored (`nox -s report -- --check` renders from them)."""
    stored = sorted((ROOT / "docs").glob("*.json.gz"))
    assert stored
    for path in stored:
        raw = json.loads(gzip.decompress(path.read_bytes()))
        cells = {c.id: c for c in read_json(path).cells}
        for data in raw["cells"]:
            request = cells[data["id"]].requirements
            assert request.serialize() == data.get("requirements", []), path.name
            assert request.pins and not request.own_index


def test_a_pin_is_a_requirement_packaging_reads_and_never_a_flag() -> None:
    with pytest.raises(CompatError, match=r"'--index-url https://x' is not a requirement"):
        InstallRequest(("--index-url https://x",))
    with pytest.raises(CompatError, match=r"write one like numpy==1\.26\.4"):
        InstallRequest(("onnx==",))
    with pytest.raises(ValueError, match="is not a string"):  # a crafted report
        InstallRequest.from_strings(["onnx==1.18.0", 7])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="'numpy>>2' is not a requirement"):
        InstallRequest.from_strings(["numpy>>2"])
    request = InstallRequest(("ONNX==1.18.0", "numpy", "pkg[x]==1.0", "onnxruntime==1.24.4"))
    assert request.exact() == (("ONNX", "1.18.0"), ("onnxruntime", "1.24.4"))
    assert [r.name for r in request.requirements] == ["ONNX", "numpy", "pkg", "onnxruntime"]


def test_uv_is_given_each_field_as_its_own_arguments() -> None:
    request = InstallRequest(
        ("onnx==1.18.0", "numpy<2"),
        Project(Path("/x/proj"), ("test",)),
        (Path("/x/lib"),),
        "https://mirror.example/simple",
        ("https://a.example/simple", "https://b.example/simple"),
    )
    assert install_args(request) == [
        "onnx==1.18.0",
        "numpy<2",
        "-e",
        "/x/lib",
        "--index-url",
        "https://mirror.example/simple",
        "--extra-index-url",
        "https://a.example/simple",
        "--extra-index-url",
        "https://b.example/simple",
    ]  # the project: its wheel's dependencies are pins by then, its wheel a step of its own
    wheel = Path("/state/proj-1.0-py3-none-any.whl")
    venv, install, project = install_commands(
        "uv", sys.executable, Path("/env"), Path("/env/bin/python"), request, wheel, ("NumPy",)
    )
    assert venv[:2] == ["uv", "venv"] and project[-1] == str(wheel)
    assert install[install.index("/env/bin/python") + 1 :] == install_args(request)
    # only the pin released as sdists alone is built; every other stays wheels only
    assert [a for a in install if a.startswith("--no-build")] == ["--no-build-package=onnx"]


def test_a_cells_indexes_come_from_its_axes(tmp_path: Path) -> None:
    """The first axis's `index-url` replaces the default index; another axis's different
    one is searched besides it (uv takes one `--index-url`); `extra-index-url` adds."""
    text = """
[tool.compat.onnx]
versions = ["1.18.0"]
pair = "1.24.4"
index-url = "https://onnx.example/simple"
extra-index-url = "https://more.example/simple"

[tool.compat.onnxruntime]
versions = ["1.24.4"]
pair = "1.18.0"
index-url = "https://ort.example/simple"
"""
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    config = load_config(path)
    request = expand(config).cells[0].requirements
    assert request.index_url == "https://onnx.example/simple"
    assert request.extra_index_urls == ("https://ort.example/simple", "https://more.example/simple")
    assert request.pins[:2] == ("onnx==1.18.0", "onnxruntime==1.24.4")
    project = Project(tmp_path, ("test",))
    assert expand(replace(config, project=project)).cells[0].requirements.project == project


#: the only modules that may spell an installer flag: uv's arguments, the stored form
SPELLERS = {"execute/installer.py", "core/install.py"}
FLAGS = ("--index-url", "--extra-index-url", "--project", "-e ")


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _flag_strings(path: Path) -> list[str]:
    """`line: text` of each string in the code (docstrings aside) that spells a flag."""
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    return [
        f"{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and (node.value.strip() == "-e" or node.value.lstrip().startswith(FLAGS))
    ]


def test_no_module_but_the_installer_reads_a_flag_out_of_a_requirement() -> None:
    """Like tests/test_layers.py for imports: a flag's spelling appears in two modules
    only, so no other can split, match or build one from a requirement's text."""
    package = ROOT / "compat"
    found = {
        path.relative_to(package).as_posix(): _flag_strings(path)
        for path in sorted(package.rglob("*.py"))
        if path.relative_to(package).as_posix() not in SPELLERS
    }
    assert {name: hits for name, hits in found.items() if hits} == {}
    assert all(_flag_strings(ROOT / "compat" / name) for name in SPELLERS)  # the check sees
