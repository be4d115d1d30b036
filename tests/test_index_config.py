"""Which indexes the installs use (compat/plan/index_config.py), read as uv reads them:
its variables over its files, the project's file over the user's, pip's variables only
when uv names no index (and then handed to uv), PyPI when nothing does."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.core.errors import UsageError
from compat.plan.index_config import (
    PYPI,
    AxisIndex,
    Source,
    configured,
    installer_env,
    shown,
    with_axis,
)


def _urls(cwd: Path, **environ: str) -> list[tuple[str, str]]:
    """(URL, where it came from) of each index asked, extra ones first; HOME is `cwd`
    so no user file of this machine counts."""
    found = configured(cwd, {"HOME": str(cwd), "XDG_CONFIG_DIRS": str(cwd / "etc"), **environ})
    return [(s.url, s.where) for s in found.sources]


def test_nothing_configured_is_pypi(tmp_path: Path) -> None:
    assert _urls(tmp_path) == [(PYPI, "PyPI, uv's default")]


def test_uv_variables_name_the_default_and_the_extra_indexes_in_uvs_order(tmp_path: Path) -> None:
    assert _urls(tmp_path, UV_INDEX_URL="https://old/simple") == [
        ("https://old/simple", "UV_INDEX_URL")
    ]
    both = _urls(tmp_path, UV_INDEX_URL="https://old/simple", UV_DEFAULT_INDEX="https://new/simple")
    assert both == [("https://new/simple", "UV_DEFAULT_INDEX")]
    extra = _urls(
        tmp_path,
        UV_INDEX="internal=https://a/simple https://b/simple",
        UV_EXTRA_INDEX_URL="https://c/simple",
    )
    assert extra == [
        ("https://a/simple", "UV_INDEX"),
        ("https://b/simple", "UV_INDEX"),
        ("https://c/simple", "UV_EXTRA_INDEX_URL"),
        (PYPI, "PyPI, uv's default"),
    ]
    named = configured(tmp_path, {"HOME": str(tmp_path), "UV_INDEX": "internal=https://a/simple"})
    assert named.sources[0].name == "internal" and named.first_only
    merged = configured(tmp_path, {"HOME": str(tmp_path), "UV_INDEX_STRATEGY": "unsafe-best-match"})
    assert not merged.first_only


def test_the_nearest_project_file_then_the_users(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[[tool.uv.index]]\nurl = "https://mirror/simple"\n'
        'default = true\n\n[[tool.uv.index]]\nname = "pinned"\nurl = "https://pinned/simple"\n'
        "explicit = true\n"
    )
    user = tmp_path / ".config" / "uv"
    user.mkdir(parents=True)
    (user / "uv.toml").write_text(
        'index-url = "https://user/simple"\nextra-index-url = ["https://user-extra/simple"]\n'
    )
    assert _urls(project / "src", HOME=str(tmp_path)) == [
        ("https://user-extra/simple", str(user / "uv.toml")),
        ("https://mirror/simple", str(project / "pyproject.toml")),  # the project's wins
    ]
    # a uv.toml beside it wins over the pyproject; variables over both
    (project / "uv.toml").write_text('[pip]\nindex-url = "https://pip-section/simple"\n')
    assert _urls(project)[-1] == ("https://pip-section/simple", str(project / "uv.toml"))
    assert _urls(project, UV_DEFAULT_INDEX="https://env/simple")[-1][1] == "UV_DEFAULT_INDEX"
    assert _urls(project, UV_NO_CONFIG="1") == [(PYPI, "PyPI, uv's default")]
    alone = tmp_path / "alone.toml"
    alone.write_text('[[index]]\nurl = "https://alone/simple"\ndefault = true\n')
    assert _urls(project, UV_CONFIG_FILE=str(alone)) == [("https://alone/simple", str(alone))]


def test_a_pyproject_without_tool_uv_is_passed_over_and_a_broken_file_is_one_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "uv.toml").write_text('index-url = "https://parent/simple"\n')
    child = tmp_path / "child"
    child.mkdir()
    (child / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert _urls(child)[-1] == ("https://parent/simple", str(tmp_path / "uv.toml"))
    (tmp_path / "uv.toml").write_text("index-url = \n")
    with pytest.raises(UsageError, match=r"uv\.toml: cannot read uv's settings .*UV_NO_CONFIG=1"):
        _urls(child)


def test_pip_variables_count_only_when_uv_names_no_index_and_are_handed_to_uv(
    tmp_path: Path,
) -> None:
    pip = {"PIP_INDEX_URL": "https://pip/simple", "PIP_EXTRA_INDEX_URL": "https://pip-x/simple"}
    assert _urls(tmp_path, **pip) == [
        ("https://pip-x/simple", "PIP_EXTRA_INDEX_URL"),
        ("https://pip/simple", "PIP_INDEX_URL"),
    ]
    env = {"HOME": str(tmp_path), **pip}
    assert installer_env(env) == {
        "UV_DEFAULT_INDEX": "https://pip/simple",
        "UV_INDEX": "https://pip-x/simple",
    }
    uv = {**env, "UV_INDEX_URL": "https://uv/simple"}
    assert _urls(tmp_path, **uv) == [("https://uv/simple", "UV_INDEX_URL")]
    assert installer_env(uv) == {}  # uv reads its own already


def test_an_axis_index_replaces_the_default_and_credentials_are_never_shown() -> None:
    user = configured(Path("/"), {"HOME": "/nonexistent", "UV_INDEX": "https://extra/simple"})
    axis = with_axis(user, AxisIndex("https://nightly/simple"), "[tool.compat.onnxruntime]")
    assert [s.url for s in axis.sources] == ["https://extra/simple", "https://nightly/simple"]
    assert axis.sources[-1].where == "index-url of [tool.compat.onnxruntime]"
    assert shown("https://bob:hunter2@mirror.example/simple") == "https://mirror.example/simple"
    assert Source("https://tok@h/simple", "UV_INDEX_URL").shown == "https://h/simple"
