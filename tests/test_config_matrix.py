"""[tool.compat] loading and the expansion of axes into cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.cli.commands.matrix import MatrixRequest
from compat.cli.main import parse
from compat.core.case import Case, KnownFailure
from compat.core.errors import ConfigError, UsageError
from compat.core.outcomes import CheckResult, Outcome
from compat.corpus.known import classify
from compat.execute.installer import resolver_reason
from compat.plan.config import load_config
from compat.plan.matrix import (
    Cell,
    expand,
    parse_axis,
    parse_version_list,
    parse_with,
    select_cells,
    tag_of,
)
from compat.workflow.corpus import load_corpus
from tests.conftest import ROOT

CONFIG = load_config(ROOT / "pyproject.toml")

MINIMAL = """
[tool.compat.onnx]
versions = ["1.18.0", "1.21.0"]
pair = "1.24.4"

[tool.compat.onnxruntime]
versions = ["1.17.3", "1.24.4"]
pair = "1.23.2"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    return path


def test_the_default_matrix_spans_every_minor_release_from_the_brief() -> None:
    onnx_minors = {v.rsplit(".", 1)[0] for v in CONFIG.onnx.versions}
    ort_minors = {v.rsplit(".", 1)[0] for v in CONFIG.onnxruntime.versions}
    assert {f"1.{m}" for m in range(14, 24)} <= onnx_minors
    assert {f"1.{m}" for m in range(15, 33)} <= ort_minors


def test_axes_pair_each_release_with_the_other_package_and_share_no_cell_twice() -> None:
    plan = expand(CONFIG, onnx=("1.18.0", "1.23.2"), ort=("1.17.3", "1.24.4"))
    assert [c.id for c in plan.axes["onnx"]] == ["onnx1.18.0-ort1.24.4", "onnx1.23.2-ort1.24.4"]
    assert [c.id for c in plan.axes["onnxruntime"]] == [
        "onnx1.23.2-ort1.17.3",
        "onnx1.23.2-ort1.24.4",
    ]
    assert len(plan.cells) == 3  # onnx1.23.2-ort1.24.4 is on both axes, built once


def test_cross_runs_the_product() -> None:
    plan = expand(CONFIG, onnx=("1.18.0", "1.21.0"), ort=("1.17.3", "1.24.4"), cross=True)
    assert [c.id for c in plan.cells] == [
        "onnx1.18.0-ort1.17.3",
        "onnx1.18.0-ort1.24.4",
        "onnx1.21.0-ort1.17.3",
        "onnx1.21.0-ort1.24.4",
    ]
    assert set(plan.axes) == {"cell"}


def test_declared_constraints_apply_only_inside_their_range() -> None:
    plan = expand(CONFIG, onnx=("1.23.2",), ort=("1.18.0", "1.18.1"), cross=True)
    old, new = plan.cells
    assert "numpy<2" in old.requirements.pins
    assert "numpy<2" not in new.requirements.pins
    assert new.requirements.pins[:2] == ("onnx==1.23.2", "onnxruntime==1.18.1")


def test_cells_select_by_glob_and_a_glob_matching_nothing_is_a_usage_error() -> None:
    plan = expand(CONFIG)
    picked = select_cells(plan, ("onnx1.18*",))
    assert [c.id for c in picked.cells] == ["onnx1.18.0-ort1.24.4"]
    with pytest.raises(UsageError, match="matches no cell"):
        select_cells(plan, ("onnx9*",))


def test_a_version_list_rejects_junk_naming_the_flag() -> None:
    assert parse_version_list("1.18.0, 1.21.0", "--onnx") == ("1.18.0", "1.21.0")
    with pytest.raises(UsageError, match=r"--ort: 'latest' is not a version"):
        parse_version_list("1.17.3,latest", "--ort")


def test_a_minimal_config_loads(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    assert config.onnx.pair == "1.24.4"
    assert config.timeout == 60
    assert config.constraints == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL + "\n[tool.compat]\njobs = 3\n", "unknown key 'jobs' in [tool.compat]"),
        (MINIMAL.replace('pair = "1.24.4"', 'pair = "1.24.4"\npin = 1'), "unknown key 'pin'"),
        (MINIMAL.replace('"1.21.0"', '"newest"'), "'newest' is not a version"),
        (MINIMAL.replace('pair = "1.23.2"', ""), "is missing 'pair'"),
        ("[tool.other]\n", "no [tool.compat] table"),
        (
            MINIMAL + '[[tool.compat.constraints]]\npackage = 3\nversions = ""\nrequires = []\n',
            "package must name an axis",
        ),
        (MINIMAL + "[tool.compat.axes.protobuf]\nversions = []\n", "non-empty list"),
        (MINIMAL + '[tool.compat.axes.onnx]\nversions = ["1.18.0"]\n', "has its own axis"),
        (MINIMAL + '[tool.compat.axes.numpy]\nversion = ["1"]\n', "unknown key 'version'"),
        ("[tool.compat\n", "cannot read configuration"),
    ],
)
def test_bad_configuration_is_one_clear_error_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


KNOWN = """
[[tool.compat.known]]
cases = "models.wrong_output_*"
package = "onnxruntime"
versions = ">=1.20"
checks = ["annotations"]
reason = "our exporter writes seq for the doubled axis"
link = "https://github.com/example/exporter/issues/7"
"""


def corpus_with(config_path: Path, *extra: str) -> list[Case]:
    _, request = parse(
        [
            "matrix",
            "--config",
            str(config_path),
            "--corpus",
            str(ROOT / "cases"),
            "--cases-dir",
            str(ROOT / "examples" / "models"),
            *extra,
        ]
    )
    assert isinstance(request, MatrixRequest)
    return load_corpus(request.common, load_config(config_path)).cases


def test_known_failures_of_any_case_are_data_in_the_config(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + KNOWN)
    (entry,) = load_config(path).known
    assert entry.cases == "models.wrong_output_*"
    assert entry.failure == KnownFailure(
        "onnxruntime",
        ">=1.20",
        ("annotations",),
        "our exporter writes seq for the doubled axis",
        "https://github.com/example/exporter/issues/7",
        ("fail", "error"),
    )
    cases = {c.id: c for c in corpus_with(path)}
    assert cases["models.wrong_output_annotation"].known == (entry.failure,)
    assert cases["models.layer_norm"].known == ()
    own = cases["pad_pads_from_constant.value_ints"]  # a corpus case keeps its own, first
    assert own.known and entry.failure not in own.known


@pytest.mark.parametrize(
    ("ort", "outcome", "expected"),
    [
        ("1.24.4", Outcome.FAIL, Outcome.XFAIL),
        ("1.24.4", Outcome.PASS, Outcome.XPASS),
        ("1.19.2", Outcome.FAIL, Outcome.FAIL),  # outside the range
        ("1.24.4", Outcome.CRASH, Outcome.CRASH),  # not a listed symptom
    ],
)
def test_a_config_known_failure_classifies_like_a_case_s_own(
    tmp_path: Path, ort: str, outcome: Outcome, expected: Outcome
) -> None:
    cases = {c.id: c for c in corpus_with(write(tmp_path, MINIMAL + KNOWN), "--cases", "models.*")}
    case = cases["models.wrong_output_annotation"]
    got = classify(CheckResult("c", case.id, "annotations", outcome), case, Cell("1.23.2", ort, ()))
    assert got.outcome is expected
    if expected is Outcome.XPASS:
        assert "our exporter writes seq" in got.detail and "issues/7" in got.detail


def test_a_config_glob_matching_no_loaded_case_is_not_an_error(tmp_path: Path) -> None:
    """One config serves runs with and without a --cases-dir, with and without --suite."""
    path = write(tmp_path, MINIMAL + KNOWN.replace("models.wrong_output_*", "onnx_backend.*"))
    assert corpus_with(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("link =", "url ="), "unknown key 'url' in [tool.compat.known #1]; allowed keys are"),
        (
            ('package = "onnxruntime"', 'package = "numpy"'),
            "package = 'numpy': package must be onnx or onnxruntime",
        ),
        (('versions = ">=1.20"', 'versions = "1.20+"'), "'1.20+' is not a version range"),
        (('checks = ["annotations"]', 'checks = "annotations"'), "checks must be a list of"),
        (('checks = ["annotations"]', "checks = []"), "checks must be a list of strings"),
        (
            ("reason = ", "outcomes = ['segfault']\nreason = "),
            "outcomes = ['segfault']: outcomes must list outcomes a known failure can absorb: "
            "fail, error, crash",
        ),
        (
            ('reason = "our exporter writes seq for the doubled axis"', 'reason = ""'),
            "reason must say what fails and why",
        ),
        (('cases = "models.wrong_output_*"\n', ""), "[tool.compat.known #1] is missing 'cases'"),
    ],
)
def test_a_bad_known_table_is_one_error_naming_the_file_and_key(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    path = write(tmp_path, MINIMAL + KNOWN.replace(*change))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_known_check_no_matched_case_has_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + KNOWN.replace('"annotations"', '"ort_optimized"'))
    with pytest.raises(ConfigError) as info:
        corpus_with(path)
    assert str(info.value).startswith(
        f"{path} [tool.compat.known #1]: check 'ort_optimized' is not a check of the cases "
        "'models.wrong_output_*' matches; use one of annotations, annotations_builtin, checker"
    )


@pytest.mark.parametrize("value", ["0", "-1", '"60"', "inf"])
def test_a_nonsensical_config_timeout_is_an_error(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, "[tool.compat]\ntimeout = " + value + "\n" + MINIMAL)
    with pytest.raises(ConfigError, match=r"timeout = .*: give a positive number of seconds"):
        load_config(path)


def test_an_extra_axis_multiplies_the_cells_it_applies_to_and_pins_them() -> None:
    extra = (("protobuf", ("3.20.3", "6.33.0")),)
    plan = expand(CONFIG, ("1.16.2", "1.23.2"), ("1.24.4",), True, extra, ("numpy==2.2.6",))
    assert [c.id for c in plan.cells] == [
        f"onnx{o}-ort1.24.4-protobuf{p}-with-numpy2.2.6"
        for o in ("1.16.2", "1.23.2")
        for p in ("3.20.3", "6.33.0")
    ]
    first = plan.cells[0]
    assert "protobuf==3.20.3" in first.requirements.pins
    assert "protobuf" not in first.requirements.pins
    assert "numpy==2.2.6" in first.requirements.pins and first.version("protobuf") == "3.20.3"
    axes = expand(CONFIG, ("1.16.2",), ("1.17.3",), False, extra)
    assert [c.id for c in axes.axes["onnx"]] == [
        "onnx1.16.2-ort1.24.4-protobuf3.20.3",
        "onnx1.16.2-ort1.24.4-protobuf6.33.0",
    ]


def test_extra_axes_come_from_the_config_and_the_command_line_replaces_them(
    tmp_path: Path,
) -> None:
    config = load_config(
        write(tmp_path, MINIMAL + '[tool.compat.axes.protobuf]\nversions = ["5.29.5"]\n')
    )
    assert config.axes == (("protobuf", ("5.29.5",)),)
    assert {c.version("protobuf") for c in expand(config).cells} == {"5.29.5"}
    assert parse_axis("protobuf=6.33.0,7.36.2") == ("protobuf", ("6.33.0", "7.36.2"))
    for bad, message in [
        ("protobuf", "write NAME=V1,V2"),
        ("onnx=1.18.0", "has its own axis"),
        ("protobuf=new", "is not a version"),
    ]:
        with pytest.raises(UsageError, match=message):
            parse_axis(bad)
    # `--with`: an exact pin makes cells of its own, a range or a marker is resolved per cell
    assert parse_with("NumPy==1.26.4") == ("numpy==1.26.4", True)
    assert parse_with("numpy>=2") == ("numpy>=2", False)
    assert parse_with("numpy==1.26.*") == ("numpy==1.26.*", False)
    assert parse_with("numpy==1.26.4; python_version < '3.12'")[1] is False
    editable = (Path("/x/myproject/"),)
    assert tag_of(("numpy==1.26.4",), editable) == "with-numpy1.26.4-with-myproject"
    with pytest.raises(UsageError, match="every cell has numpy already"):
        parse_with("numpy")


#: uv 0.9's message for onnx 1.23.2 with protobuf 3.20.3, as a cell recorded it
UV_MESSAGE = """error: No solution found when resolving dependencies:
  cause: Because onnx>=1.23.2 depends on protobuf>=6.31.1 and you require onnx==1.23.2, we can
         conclude that you require protobuf>=6.31.1.
         And because you require protobuf==3.20.3, we can conclude that your requirements are
         unsatisfiable."""


def test_the_resolver_s_reason_reads_in_one_line_naming_the_cell_s_pin() -> None:
    requirements = ("onnx==1.23.2", "onnxruntime==1.24.4", "numpy", "protobuf==3.20.3")
    assert resolver_reason(UV_MESSAGE, requirements) == (
        "onnx>=1.23.2 requires protobuf>=6.31.1, not protobuf==3.20.3"
    )
    assert resolver_reason("error: network unreachable", requirements) == ""


def test_the_resolver_s_reason_names_the_requirement_it_really_clashes_with() -> None:
    # uv 0.13's words for a test dependency's range against an old onnxruntime's numpy<2:
    # the clash is with numpy<2 (a constraint), not with the bare `numpy` every cell has
    message = """error: No solution found when resolving dependencies
  cause: Because ml-dtypes>=0.7.0 depends on numpy>=2.0.0 and you require numpy<2, we can
         conclude that your requirements and ml-dtypes>=0.7.0 are incompatible.
         And because you require ml-dtypes>=0.7, we can conclude that your requirements
         are unsatisfiable."""
    requirements = (
        "onnx==1.16.2",
        "onnxruntime==1.17.3",
        "numpy",
        "protobuf",
        "numpy<2",
        "ml_dtypes>=0.7",
    )
    assert resolver_reason(message, requirements) == (
        "ml-dtypes>=0.7.0 requires numpy>=2.0.0, but the cell requires numpy<2"
    )
    # two pinned packages' own requirements of a third (onnx 1.13.1 beside onnxruntime 1.32)
    both = """error: No solution found when resolving dependencies
  cause: Because onnx==1.13.1 depends on protobuf>=3.20.2,<4 and onnxruntime>=1.32.0 depends
         on protobuf>=4.25.8, we can conclude that onnx==1.13.1 and onnxruntime>=1.32.0 are
         incompatible."""
    assert resolver_reason(both, ("onnx==1.13.1", "onnxruntime==1.32.0", "protobuf")) == (
        "onnx==1.13.1 requires protobuf>=3.20.2,<4, but onnxruntime>=1.32.0 requires "
        "protobuf>=4.25.8"
    )


def test_a_preview_name_beside_junk_is_an_error_before_the_index_is_asked() -> None:
    from compat.plan.follow import previews

    with pytest.raises(UsageError, match="'newest' is not a version"):
        previews("weekly,newest")
    assert previews("1.18.0,1.21.0") == (("1.18.0", "1.21.0"), {})


def test_an_axis_that_follows_the_index_is_one_release_per_minor_recorded_for_offline(
    tmp_path: Path,
) -> None:
    from compat.plan.follow import follow, newest_per_minor

    assert newest_per_minor(["1.20.0", "1.20.1", "1.21.0rc1", "1.21.0", "1.19.2", "1.9.0"]) == (
        "1.9.0",
        "1.19.2",
        "1.20.1",
        "1.21.0",
    )
    config = load_config(write(tmp_path, MINIMAL.replace('["1.18.0", "1.21.0"]', '">=1.20"')))
    assert config.onnx.follows == ">=1.20" and config.onnx.versions == ()
    state = tmp_path / "state"
    with pytest.raises(UsageError, match=r"no recorded resolution of onnx >=1\.20"):
        follow(config, state, offline=True)
    state.mkdir()
    (state / "axes.json").write_text('{"onnx >=1.20": {"versions": ["1.20.1", "1.21.0"]}}')
    resolved, said = follow(config, state, offline=True)
    assert resolved.onnx.versions == ("1.20.1", "1.21.0")
    assert said == {"onnx": {"range": ">=1.20", "versions": ["1.20.1", "1.21.0"]}}
    assert [c.onnx for c in expand(resolved).axes["onnx"]] == ["1.20.1", "1.21.0"]
    with pytest.raises(ConfigError, match="is not a version range"):
        load_config(write(tmp_path, MINIMAL.replace('["1.18.0", "1.21.0"]', '"newest"')))


@pytest.mark.envs
def test_an_axis_that_follows_the_index_resolves_from_the_real_index(tmp_path: Path) -> None:
    from compat.plan.follow import follow

    config = load_config(write(tmp_path, MINIMAL.replace('["1.18.0", "1.21.0"]', '">=1.20,<1.22"')))
    resolved, _ = follow(config, tmp_path / "state")
    assert resolved.onnx.versions == ("1.20.1", "1.21.0")  # the newest patch of each minor
    assert (tmp_path / "state" / "axes.json").is_file()


def test_an_axis_may_come_from_another_index_and_its_cells_install_from_it(
    tmp_path: Path,
) -> None:
    """onnxruntime nightlies live on another index; this machine cannot reach one, so
    the test checks what uv is asked, not an install."""
    from compat.execute.installer import install_args

    extra = (
        "https://aiinfra.pkgs.visualstudio.com/PublicPackages/_packaging/ORT-Nightly/pypi/simple/"
    )
    text = MINIMAL.replace('pair = "1.23.2"', f'pair = "1.23.2"\nextra-index-url = "{extra}"')
    config = load_config(write(tmp_path, text))
    cell = expand(config).cells[0]
    assert cell.requirements.extra_index_urls == (extra,)
    args = install_args(cell.requirements)
    assert args[args.index("--extra-index-url") + 1] == extra
    assert cell.id == "onnx1.18.0-ort1.24.4"  # ids do not change, environments do
    with pytest.raises(ConfigError, match="index-url must be a URL"):
        load_config(
            write(tmp_path, MINIMAL.replace('pair = "1.23.2"', 'pair = "1.23.2"\nindex-url = "x"'))
        )
