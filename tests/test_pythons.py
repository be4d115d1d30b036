"""The Python axis as planned: interpreters found, versions parsed, cells multiplied, the
pair following each Python by the package index, and no-wheel decided from the index.

The interpreters are this machine's (pyenv's CPython 3.9–3.13, as on CI's machine);
the wheels are the package index's, asked live, never a table written here.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from compat.core.errors import ConfigError, UsageError
from compat.core.install import InstallRequest, Project
from compat.plan.config import load_config
from compat.plan.index import has_wheel, missing_wheel
from compat.plan.matrix import expand, select_axis, select_shard
from compat.plan.pairs import follow_pairs, main_python
from compat.plan.pythons import (
    find_python,
    installed,
    is_version_list,
    parse_pythons,
    python_version,
)
from tests.conftest import ROOT

CONFIG = load_config(ROOT / "pyproject.toml")
#: what this project's machines have installed (DEVELOPERS.md: pyenv, on CI's machine too)
MACHINE = ("3.9", "3.10", "3.11", "3.12", "3.13")


@pytest.mark.parametrize(
    ("text", "axis"),
    [
        ("3.12", True),
        ("3.10,3.12", True),
        (">=3.10", True),
        (">=3.10,<3.13", True),
        (sys.executable, False),
        ("python3.12", False),
        ("/usr/bin/python3", False),
    ],
)
def test_versions_make_an_axis_and_a_path_stays_one_interpreter(text: str, axis: bool) -> None:
    assert is_version_list(text) is axis


@pytest.mark.subprocess
@pytest.mark.parametrize("version", MACHINE)
def test_each_installed_python_is_found_and_is_that_version(version: str) -> None:
    interpreter = find_python(version)
    assert python_version(interpreter) == version  # asked: the interpreter says so itself
    assert version in installed()


@pytest.mark.subprocess
def test_a_missing_python_is_one_line_naming_what_is_installed() -> None:
    with pytest.raises(UsageError) as error:
        find_python("3.14", "--python")
    message = str(error.value)
    assert "--python 3.14: no CPython 3.14 interpreter found" in message
    assert "3.12" in message and "uv python install 3.14" in message
    assert "\n" not in message


@pytest.mark.subprocess
def test_a_range_follows_what_is_installed_and_requires_python() -> None:
    assert parse_pythons(">=3.10", "--python") == tuple(
        v for v in installed() if v >= "3.10" and len(v) == 4
    )
    assert parse_pythons(">=3.9", "--python", ">=3.10,<3.13") == ("3.10", "3.11", "3.12")
    with pytest.raises(UsageError, match="no installed CPython in that range"):
        parse_pythons(">=3.20", "--python")


def test_a_list_is_taken_as_given_without_asking_anything() -> None:
    assert parse_pythons("3.12,3.10,3.12", "--python") == ("3.12", "3.10")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('versions = "3.12+"', "give minor versions"),
        ("versions = [3.12]", "minor versions"),
        ('versions = ["3.12"]\nextra = 1', "unknown key 'extra'"),
        ('versions = ["3.12"]\nreleases = "some"', "releases = 'some': give \"newest\": one cell"),
    ],
)
def test_a_bad_python_table_is_one_error_naming_the_file(
    tmp_path: Path, table: str, message: str
) -> None:
    config = (ROOT / "pyproject.toml").read_text() + f"\n[tool.compat.python]\n{table}\n"
    (tmp_path / "pyproject.toml").write_text(config)
    with pytest.raises(ConfigError, match=message) as error:
        load_config(tmp_path / "pyproject.toml")
    assert str(tmp_path / "pyproject.toml") in str(error.value)


def test_several_pythons_multiply_the_cells_and_name_themselves_in_ids() -> None:
    one = expand(CONFIG)
    two = expand(CONFIG, pythons=("3.10", "3.12"))
    assert len(two.cells) == 2 * len(one.cells)
    assert {c.id.split("-", 1)[0] for c in two.cells} == {"py3.10", "py3.12"}
    assert set(two.axes) == {"onnx@3.10", "onnxruntime@3.10", "onnx@3.12", "onnxruntime@3.12"}
    assert [c.id for c in expand(CONFIG, pythons=("3.12",)).cells] == [c.id for c in one.cells]
    alone = expand(CONFIG, pythons=("3.12",)).cells[0]
    assert alone.python == "3.12" and alone.env_name == f"py3.12-{alone.id}"  # its own folder
    # every shard of a sharded run holds cells of every Python
    for k in (1, 2, 3):
        shard = select_shard(two, k, 3)
        assert {c.python for c in shard.cells} == {"3.10", "3.12"}
    only = select_axis(two, "onnxruntime")
    assert set(only.axes) == {"onnxruntime@3.10", "onnxruntime@3.12"}


def test_by_default_one_python_runs_every_release_and_each_other_its_newest_pair() -> None:
    pairs = {
        "3.10": ("1.23.2", "1.22.0"),
        "3.11": (CONFIG.onnx.pair, CONFIG.onnxruntime.pair),
        "3.13": (CONFIG.onnx.pair, CONFIG.onnxruntime.pair),
    }
    every = expand(CONFIG, pythons=tuple(pairs), pairs=pairs)
    plan = expand(CONFIG, pythons=tuple(pairs), pairs=pairs, main="3.11")
    main = [c for c in plan.cells if c.python == "3.11"]
    assert main == [c for c in every.cells if c.python == "3.11"]  # its every release
    (old,) = [c for c in plan.cells if c.python == "3.10"]
    assert (old.id, old.onnx, old.onnxruntime) == (
        "py3.10-onnx1.22.0-ort1.23.2",
        "1.22.0",
        "1.23.2",
    )
    (new,) = [c for c in plan.cells if c.python == "3.13"]
    assert (new.onnx, new.onnxruntime) == (CONFIG.onnxruntime.pair, CONFIG.onnx.pair)
    assert len(plan.cells) == len(main) + 2 < len(every.cells)
    assert plan.axes["onnx@3.10"] == plan.axes["onnxruntime@3.10"] == (old,)
    assert set(plan.axes) == set(every.axes)  # the reports lay it out as before
    crossed = expand(
        CONFIG,
        ("1.18.0", "1.23.2"),
        ("1.22.1",),
        cross=True,
        pythons=tuple(pairs),
        pairs=pairs,
        main="3.11",
    )
    assert [len(crossed.axes[f"cell@{p}"]) for p in pairs] == [1, 2, 1]


@pytest.mark.subprocess  # asks the package index
def test_the_python_of_every_release_is_the_one_with_wheels_for_the_most() -> None:
    onnx, ort = CONFIG.onnx.versions, CONFIG.onnxruntime.versions
    # 3.9: no onnxruntime after 1.19 has its wheel; 3.13: no onnx before 1.17
    assert main_python(CONFIG, ("3.9", "3.11", "3.13"), onnx, ort, running="3.13") == "3.11"
    # of equals (an index that cannot say counts every release), the running one
    assert main_python(CONFIG, ("3.9", "3.13"), (), (), running="3.9") == "3.9"
    assert main_python(CONFIG, ("3.9", "3.13"), (), (), running="3.11") == "3.13"


def test_a_constraint_may_name_python() -> None:
    config = load_config(ROOT / "pyproject.toml")
    from dataclasses import replace

    from compat.plan.config import Constraint

    numpy = Constraint("python", "<3.11", ("numpy<2",), "old Pythons get old numpy")
    config = replace(config, constraints=(*config.constraints, numpy))
    plan = expand(config, ("1.18.0",), ("1.22.1",), pythons=("3.10", "3.12"))
    by_python = {c.python: c.requirements.pins for c in plan.cells if c.onnx == "1.18.0"}
    assert "numpy<2" in by_python["3.10"] and "numpy<2" not in by_python["3.12"]


@pytest.mark.subprocess  # asks the package index
def test_the_pair_follows_the_python_to_the_newest_release_with_a_wheel() -> None:
    onnx, ort = CONFIG.onnx.versions, CONFIG.onnxruntime.versions
    pairs = follow_pairs(CONFIG, MACHINE, onnx, ort)
    for python, (ort_pair, onnx_pair) in pairs.items():
        assert has_wheel("onnxruntime", ort_pair, python), (python, ort_pair)
        assert has_wheel("onnx", onnx_pair, python), (python, onnx_pair)
        newer = [
            r for r in ort if tuple(map(int, r.split("."))) > tuple(map(int, ort_pair.split(".")))
        ]
        # the configured pair when it installs there, else nothing newer installs
        assert ort_pair == CONFIG.onnx.pair or not any(
            has_wheel("onnxruntime", r, python) for r in newer
        )
    assert pairs["3.11"] == (CONFIG.onnx.pair, CONFIG.onnxruntime.pair)


@functools.cache
def _index(package: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"https://pypi.org/pypi/{package}/json", timeout=60) as f:
        data: dict[str, Any] = json.load(f)
    return data


def _listed(package: str, release: str, python: str) -> bool:
    """From the index's file names alone (PyPI's JSON of the package), not the code under
    test: a Linux x86_64 wheel for CPython `python`, its own ABI or an earlier abi3, or
    a pure-Python wheel."""
    names = [f["filename"] for f in _index(package)["releases"][release] if not f.get("yanked")]
    minor = int(python.split(".")[1])
    for name in names:
        if name.endswith("-py3-none-any.whl"):
            return True
        found = re.search(r"-cp3(\d+)-(cp3\d+|abi3)-[^-]*(manylinux|linux)[^-]*x86_64\.whl$", name)
        if found and (int(found[1]) == minor or (found[2] == "abi3" and int(found[1]) <= minor)):
            return True
    return False


@pytest.mark.subprocess  # asks the package index
def test_no_wheel_is_what_the_index_lists_for_every_default_cell_and_python() -> None:
    """Every (package, release, Python) triple of the default plan on this machine's
    Pythons: a cell is no-wheel exactly when one of its pinned releases has no wheel
    for its Python in the index's file listing, and says which."""
    plan = expand(
        CONFIG,
        pythons=MACHINE,
        pairs=follow_pairs(CONFIG, MACHINE, CONFIG.onnx.versions, CONFIG.onnxruntime.versions),
    )
    listed = functools.cache(_listed)
    missing = 0
    for cell in plan.cells:
        lacking = [
            (name, release)
            for name, release in (("onnx", cell.onnx), ("onnxruntime", cell.onnxruntime))
            if not listed(name, release, cell.python)
        ]
        reason = missing_wheel(cell.requirements, cell.python)
        assert bool(reason) == bool(lacking), (cell.id, reason, lacking)
        if lacking:
            missing += 1
            assert any(
                f"{n} {r} has no wheel for CPython {cell.python}" in reason for n, r in lacking
            )
    assert 0 < missing < len(plan.cells)


@pytest.mark.subprocess  # asks the package index
def test_an_adopting_projects_cells_are_no_wheel_too() -> None:
    """A project's cells install the project besides their pins (spox adopted with init:
    onnxruntime 1.24.4 on 3.10 was an install-error, not no-wheel); only a cell's own
    index makes the package index's answer moot."""
    pins = ("onnx==1.23.2", "onnxruntime==1.24.4", "numpy", "pytest")
    project = InstallRequest(pins, project=Project(Path("/tmp/project")))
    assert "onnxruntime 1.24.4 has no wheel for CPython 3.10" in missing_wheel(project, "3.10")
    own = InstallRequest(pins, extra_index_urls=("https://example.invalid/simple",))
    assert missing_wheel(own, "3.10") == ""
