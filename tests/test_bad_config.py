"""Bad configuration is exit 2 in one line naming the file, the key, the value and what
fits (compat/plan/config.py), and an empty release list on the command line is an error,
never the configured axis (compat/plan/matrix.py, compat/plan/follow.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.cli.main import main
from compat.plan.config import load_config
from tests.conftest import ROOT

ONNX = '[tool.compat.onnx]\nversions = ["1.18.0", "1.21.0"]\npair = "1.24.4"\n'
ORT = '[tool.compat.onnxruntime]\nversions = ["1.17.3", "1.24.4"]\npair = "1.23.2"\n'
AXES = ONNX + ORT
CONSTRAINT = '[[tool.compat.constraints]]\npackage = "onnxruntime"\nversions = "<1.18.1"\n'
DOCS = '[tool.compat.docs]\nresults = "matrix.json"\n'

#: (pyproject text, the key the line names); None: no key (the file itself is wrong).
BAD: list[tuple[str | bytes, str | None]] = [
    # an axis of the wrong type
    ('[tool.compat]\nonnx = "1.18.0"\n' + ORT, "onnx"),
    ("[[tool.compat.onnx]]\nversions = []\n" + ORT, "onnx"),
    (AXES.replace('versions = ["1.18.0", "1.21.0"]', "versions = 1.18"), "versions"),
    (AXES.replace('versions = ["1.18.0", "1.21.0"]', "versions = [1.18, 1.21]"), "versions"),
    (AXES.replace('versions = ["1.18.0", "1.21.0"]', 'versions = ["1.18.0", ""]'), "versions"),
    (AXES.replace('pair = "1.24.4"', "pair = 1.24"), "pair"),
    (AXES.replace('pair = "1.24.4"', 'pair = ""'), "pair"),
    (AXES.replace('pair = "1.24.4"', 'pair = "1.24.4"\nindex-url = 3'), "index-url"),
    # [tool.compat] itself
    ('[tool]\ncompat = "everything"\n', "compat"),
    ("tool = 3\n", "tool"),
    # constraints
    ('[tool.compat]\nconstraints = "numpy<2"\n' + AXES, "constraints"),
    ("[tool.compat]\nconstraints = [1]\n" + AXES, "constraints"),
    (AXES + CONSTRAINT + 'requires = "numpy"\n', "requires"),
    (AXES + CONSTRAINT + "requires = []\n", "requires"),
    (AXES + CONSTRAINT + 'requires = [""]\n', "requires"),
    (AXES + CONSTRAINT.replace('"onnxruntime"', '"numpy"') + 'requires = ["x"]\n', "package"),
    (AXES + CONSTRAINT.replace('"onnxruntime"', '""') + 'requires = ["x"]\n', "package"),
    (AXES + CONSTRAINT.replace('"<1.18.1"', "1.18") + 'requires = ["x"]\n', "versions"),
    (AXES + CONSTRAINT + 'requires = ["x"]\nreason = 3\n', "reason"),
    # the project's settings
    ("[tool.compat]\nrun = 0\n" + AXES, "run"),
    ('[tool.compat]\nrun = "pytest -q"\n' + AXES, "run"),
    ('[tool.compat]\nrun = [""]\n' + AXES, "run"),
    ('[tool.compat]\nrequires = "numpy"\n' + AXES, "requires"),
    ('[tool.compat]\nrequires = [""]\n' + AXES, "requires"),
    ('[tool.compat]\ngroups = "test"\n' + AXES, "groups"),
    ("[tool.compat]\nextras = 1\n" + AXES, "extras"),
    ('[tool.compat]\ncases-dirs = "models"\n' + AXES, "cases-dirs"),
    ('[tool.compat]\ntimeout = "60"\n' + AXES, "timeout"),
    ("[tool.compat]\ncorpus = 1\n" + AXES, "corpus"),
    ("[tool.compat]\nreruns = -1\n" + AXES, "reruns"),
    ('[tool.compat]\nreruns = "1"\n' + AXES, "reruns"),
    ("[tool.compat]\nreruns = true\n" + AXES, "reruns"),
    ('[tool.compat]\nno-cache = "tests"\n' + AXES, "no-cache"),
    ('[tool.compat]\nrun = ["tests=pytest"]\nno-cache = ["test"]\n' + AXES, None),
    # docs, extra axes, known failures
    ('[tool.compat]\ndocs = "docs"\n' + AXES, "docs"),
    (AXES + "[tool.compat.docs]\nresults = 1\n", "results"),
    (AXES + '[tool.compat.docs]\nresults = ""\n', "results"),
    (AXES + DOCS + 'collapse = "yes"\n', "collapse"),
    (AXES + DOCS + "scoreboard = 3\n", "scoreboard"),
    ("[tool.compat]\naxes = 1\n" + AXES, "axes"),
    ('[tool.compat.axes]\nprotobuf = "5.29.5"\n' + AXES, "protobuf"),
    (AXES + "[tool.compat.axes.protobuf]\nversions = [5]\n", "versions"),
    (AXES + ONNX, None),  # a table defined twice: TOML's own error, one line
    ('[tool.compat]\nknown = {cases = "x"}\n' + AXES, "known"),
    # not a configuration at all
    (b"\xff\xfe[\x00t\x00o\x00o\x00l\x00]\x00", None),  # UTF-16
    (AXES.encode() + b"\n# caf\xe9 in Latin-1\n", None),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00", None),
]


def one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("text", "key"), BAD)
def test_bad_configuration_is_exit_2_in_one_line_naming_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | bytes, key: str | None
) -> None:
    config = tmp_path / "pyproject.toml"
    if isinstance(text, bytes):
        config.write_bytes(text)
    else:
        config.write_text(text)
    err = one_line_error(
        capsys, "matrix", "--list", "--config", str(config), "--corpus", str(ROOT / "cases")
    )
    assert str(config) in err
    if key is not None:
        assert f"{key} = " in err or f"[tool.compat.{key}" in err, err


def test_no_cache_names_a_command_of_run_or_says_which_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[tool.compat]\nrun = ["tests=pytest", "lint=ruff check"]\nno-cache = ["test"]\n' + AXES
    )  # a typo
    err = one_line_error(capsys, "matrix", "--list", "--config", str(config))
    assert "no-cache: 'test' names no command of run (their names: tests, lint)" in err
    config.write_text(
        '[tool.compat]\nrun = ["tests=pytest"]\nno-cache = ["tests"]\nreruns = 0\n' + AXES
    )
    loaded = load_config(config)
    assert (loaded.no_cache, loaded.reruns) == (("tests",), 0)


def test_requires_as_a_string_is_never_split_into_characters(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(AXES + CONSTRAINT + 'requires = "numpy"\n')
    with pytest.raises(Exception, match=r"requires = 'numpy': requires must be a list"):
        load_config(config)


def test_a_constraint_on_an_extra_axis_is_accepted(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(
        AXES
        + '[tool.compat.axes.protobuf]\nversions = ["5.29.5"]\n'
        + CONSTRAINT.replace('"onnxruntime"', '"protobuf"').replace("<1.18.1", "<6")
        + 'requires = ["numpy<2"]\n'
    )
    (constraint,) = load_config(config).constraints
    assert (constraint.package, constraint.requires) == ("protobuf", ("numpy<2",))


def test_empty_settings_that_may_say_none_stay_valid(tmp_path: Path) -> None:
    """`init` writes `requires = []` when it guesses no test dependency."""
    config = tmp_path / "pyproject.toml"
    config.write_text(
        "[tool.compat]\nrequires = []\nrun = []\ngroups = []\ncases-dirs = []\n" + AXES
    )
    loaded = load_config(config)
    assert (loaded.requires, loaded.run, loaded.groups, loaded.cases_dirs) == ((), (), (), ())


@pytest.mark.parametrize("key", ["results", "scoreboard", "writer-reader"])
def test_a_docs_results_file_that_does_not_exist_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    (tmp_path / "matrix.json").write_text("{}")
    config = tmp_path / "pyproject.toml"
    named = "" if key == "results" else f'{key} = "gone/{key}.json"\n'
    docs = DOCS.replace("matrix.json", "gone.json") if key == "results" else DOCS
    config.write_text(AXES + docs + named)
    err = one_line_error(capsys, "report", "--config", str(config))
    assert str(config) in err and f"[tool.compat.docs] {key} = " in err and "no such file" in err
    assert load_config(config).docs is not None  # only the docs' own command needs it


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--onnx", ""),
        ("--onnx", ",,"),
        ("--onnx", " , "),
        ("--ort", ""),
        ("--ort", ",,"),
    ],
)
def test_an_empty_release_list_is_an_error_not_the_configured_axis(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    err = one_line_error(
        capsys, "matrix", "--list", "--config", str(ROOT / "pyproject.toml"), flag, value
    )
    assert f"{flag} {value!r}: give at least one release" in err
