"""The JSON schema of `[tool.compat]` and of a folder's compat.toml (compat/plan/schema.py,
compat/resources/tool_compat.schema.json): a valid draft-07 schema, every key with its
meaning and read by a loader, the reference's words, and a validate-pyproject plugin that
the real validate-pyproject loads from the installed entry point."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from compat.cli.reference_meanings import CONFIG, CONFIG_EXAMPLE
from compat.cli.reference_pages import configuration_page
from compat.core.errors import ConfigError
from compat.plan.config import load_config
from compat.plan.schema import get_schema, keys, validate
from tests.conftest import ROOT

SCHEMA = get_schema()
#: the modules that turn the schema's tables into values
LOADERS = (
    "plan/config.py",
    "plan/pythons.py",
    "plan/known_tables.py",
    "plan/tolerance.py",
    "corpus/dropin.py",
)


def test_the_schema_is_draft_7_and_every_key_has_a_meaning_the_reference_shows() -> None:
    Draft7Validator.check_schema(SCHEMA)
    page = configuration_page()
    tables = [SCHEMA, *SCHEMA["definitions"].values()]
    for table in tables:
        assert table["title"] in CONFIG and table["additionalProperties"] is False
        for key, prop in table["properties"].items():
            assert prop["description"].strip(), (table["title"], key)
            assert f"| `{key}` |" in page
    assert "tool_compat.schema.json" in page


def test_every_key_of_the_schema_is_read_by_a_loader() -> None:
    """A key the schema admits but no loader names would be accepted and do nothing."""
    named = {
        node.value
        for name in LOADERS
        for node in ast.walk(ast.parse((ROOT / "compat" / name).read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    every = {key for table in ("", *SCHEMA["definitions"]) for key in keys(table)}
    assert every <= named, every - named


def test_the_reference_example_and_every_table_load(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(
        CONFIG_EXAMPLE + '[tool.compat.axes.protobuf]\nversions = ["5.29.5"]\n'
        '[tool.compat.docs]\nresults = "docs/matrix.json.gz"\nascii = true\n'
    )
    loaded = load_config(config)
    assert loaded.axes == (("protobuf", ("5.29.5",)),) and loaded.docs is not None


def test_the_schema_s_defaults_are_the_loader_s(tmp_path: Path) -> None:
    """Editors show `default`; the loader gives the same value for a key left out."""
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[tool.compat.onnx]\nversions = ["1.18.0"]\npair = "1.24.4"\n'
        '[tool.compat.onnxruntime]\nversions = ["1.24.4"]\npair = "1.18.0"\n'
        '[tool.compat.python]\nversions = ["3.12"]\n'
        '[tool.compat.docs]\nresults = "m.json"\n'
        '[[tool.compat.known]]\ncases = "x.*"\npackage = "onnx"\nchecks = ["checker"]\n'
        'reason = "r"\n'
    )
    loaded = load_config(config)
    assert loaded.docs is not None
    (known,) = loaded.known
    got = {
        "": {
            "timeout": loaded.timeout,
            "cases-dirs": list(loaded.cases_dirs),
            "run": list(loaded.run),
            "requires": list(loaded.requires),
            "groups": list(loaded.groups),
            "extras": list(loaded.extras),
            "corpus": loaded.corpus,
            "command-timeout": loaded.command_timeout,
            "no-cache": list(loaded.no_cache),
            "rtol": loaded.tolerance.rtol,
            "atol": loaded.tolerance.atol,
        },
        "python": {"releases": loaded.python.releases},
        "known": {
            "versions": known.failure.versions,
            "outcomes": list(known.failure.outcomes),
            "link": known.failure.link,
        },
        "docs": {"collapse": loaded.docs.collapse, "ascii": loaded.docs.ascii},
    }
    for table, values in got.items():
        props = (SCHEMA["definitions"][table] if table else SCHEMA)["properties"]
        assert values == {k: props[k]["default"] for k in values}, table
    defaulted = {
        (table, key)
        for table in ("", *SCHEMA["definitions"])
        for key, prop in (SCHEMA["definitions"][table] if table else SCHEMA)["properties"].items()
        if "default" in prop
    }
    assert defaulted - {(t, k) for t, v in got.items() for k in v} == {
        ("constraint", "reason"),
        ("tolerance", "outputs"),
    }


def test_nan_is_no_value_of_any_key(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(
        (ROOT / "pyproject.toml").read_text().replace("timeout = ", "timeout = nan\n#", 1)
    )
    with pytest.raises(ConfigError, match=r"\[tool.compat\] timeout = nan: give a positive number"):
        load_config(config)


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"rtol": 1e-3, "known": []}, ""),
        ({"tolerance": [{"cases": "m.onnx", "rtol": -1}]}, "[tolerance #1] rtol = -1: a tolera"),
        ({"run": ["x"]}, "unknown key 'run' in compat.toml; allowed keys are atol, known,"),
    ],
)
def test_a_folder_s_compat_toml_is_the_schema_s_folder_definition(
    table: dict[str, object], said: str
) -> None:
    path = Path("models/compat.toml")
    if not said:
        validate(table, path, "folder")
        return
    with pytest.raises(ConfigError) as raised:
        validate(table, path, "folder")
    assert str(raised.value).startswith(f"{path}: {said}")


def _validate_pyproject(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "validate_pyproject", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.subprocess
def test_validate_pyproject_checks_tool_compat_with_the_installed_plugin(tmp_path: Path) -> None:
    """The entry point pyproject.toml declares is the one validate-pyproject loads."""
    pytest.importorskip("validate_pyproject")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared["validate_pyproject.tool_schema"] == {"compat": "compat.plan.schema:get_schema"}
    good = tmp_path / "good" / "pyproject.toml"
    good.parent.mkdir()
    good.write_text((ROOT / "pyproject.toml").read_text())
    done = _validate_pyproject(good)
    assert done.returncode == 0, done.stdout + done.stderr
    bad = tmp_path / "pyproject.toml"
    bad.write_text(good.read_text().replace("[tool.compat]\n", '[tool.compat]\ncorpus = "most"\n'))
    done = _validate_pyproject(bad)
    assert done.returncode == 1 and "tool.compat.corpus" in done.stdout + done.stderr
    with pytest.raises(ConfigError, match=r"\[tool.compat\] corpus = 'most': use one of all"):
        load_config(bad)
