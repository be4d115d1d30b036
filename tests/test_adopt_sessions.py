"""compat/adopt/sessions.py: the noxfile `init` writes or extends."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from compat.adopt.sessions import (
    SESSIONS,
    defined_sessions,
    installed,
    noxfile_edit,
    session_python,
)
from compat.adopt.writes import apply

RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"


def write_noxfile(project: Path, install: str, python: str) -> str:
    """What init does with noxfile.py: the edit applied, and the line saying what it did."""
    edit = noxfile_edit(project, install, python)
    apply(project, edit)
    return edit.said[0]


def test_a_new_noxfile_has_every_session_and_installs_onnx_compat_once(tmp_path: Path) -> None:
    said = write_noxfile(tmp_path, "dist/onnx_compat-0.1.0-py3-none-any.whl", "3.12")
    assert (
        said == "noxfile.py: written, sessions matrix, repro, bisect, triage, report (Python 3.12)"
    )
    text = (tmp_path / "noxfile.py").read_text()
    tree = ast.parse(text)
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert functions == ["_onnx_compat", *SESSIONS]
    assert 'ONNX_COMPAT = "dist/onnx_compat-0.1.0-py3-none-any.whl"' in text
    assert text.count('python="3.12", venv_backend="uv|virtualenv", reuse_venv=True') == 5
    assert "stamp.read_text() != want" in text  # installs only when the stamp differs
    assert '_onnx_compat(session, "bisect", *session.posargs)' in text
    assert max(len(line) for line in text.splitlines()) <= 88  # within a default linter's width


def test_an_existing_noxfile_gains_only_the_missing_sessions(tmp_path: Path) -> None:
    mine = (
        'import nox\n\n\n@nox.session(name="report")\ndef my_report(session):\n    pass\n\n\n'
        "@nox.session\ndef matrix(session):\n    pass\n"
    )
    (tmp_path / "noxfile.py").write_text(mine)
    said = write_noxfile(tmp_path, "onnx-compat", RUNNING)
    assert (
        said
        == "noxfile.py: sessions repro, bisect, triage appended (matrix, report kept as they were)"
    )
    text = (tmp_path / "noxfile.py").read_text()
    assert text.startswith(mine)
    # no import added below the project's code (E402): builtins only, where pathlib is absent
    assert text.count("import nox") == 1 and "import pathlib" not in text
    assert "pathlib" not in text and 'with open(stamp, "wb")' in text
    assert defined_sessions(text) == set(SESSIONS)
    ast.parse(text)
    again = write_noxfile(tmp_path, "other", RUNNING)
    assert again.endswith("left as it is") and (tmp_path / "noxfile.py").read_text() == text


def test_the_sessions_python_follows_requires_python() -> None:
    assert session_python("") == (RUNNING, None)
    assert session_python(f">={RUNNING}") == (RUNNING, None)
    newer = session_python(f">{RUNNING}.99")
    assert newer[0] != RUNNING and newer[1] and "requires-python" in newer[1]
    assert session_python("<3.10")[0] == RUNNING
    assert "no Python onnx-compat runs on" in str(session_python("<3.10")[1])


def test_install_given_changes_init_s_one_line_and_says_where_it_cannot(tmp_path: Path) -> None:
    write_noxfile(tmp_path, "onnx-compat", RUNNING)
    before = (tmp_path / "noxfile.py").read_text()
    wheel = "dist/onnx_compat-0.3.1-py3-none-any.whl"
    edit = noxfile_edit(tmp_path, wheel, RUNNING, given=True)
    assert edit.said == [
        "noxfile.py: has the sessions matrix, repro, bisect, triage, report; "
        "their ONNX_COMPAT line changed",
        f"  ONNX_COMPAT, what the sessions install: onnx-compat → {wheel} (--install)",
    ]
    apply(tmp_path, edit)
    after = (tmp_path / "noxfile.py").read_text()
    assert after == before.replace('ONNX_COMPAT = "onnx-compat"', f'ONNX_COMPAT = "{wheel}"')
    assert installed(after) == wheel
    # the same value again: nothing to change; not given: nothing changed either
    assert noxfile_edit(tmp_path, wheel, RUNNING, given=True).data is None
    assert noxfile_edit(tmp_path, "other", RUNNING).data is None

    # the project's own sessions, no ONNX_COMPAT line: left, and said in one line
    own = tmp_path / "own"
    own.mkdir()
    mine = "import nox\n" + "".join(
        f"\n\n@nox.session\ndef {name}(session):\n    session.install('onnx-compat')\n"
        for name in SESSIONS
    )
    (own / "noxfile.py").write_text(mine)
    edit = noxfile_edit(own, wheel, RUNNING, given=True)
    assert edit.data is None
    assert edit.said[1] == (
        f"  --install {wheel} not applied to noxfile.py: its sessions are not init's (no "
        f'ONNX_COMPAT line): make them session.install("{wheel}")'
    )


def test_install_given_changes_the_line_of_the_builtins_helper_too(tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text(
        "import nox\n\n\n@nox.session\ndef lint(session):\n    pass\n"
    )
    write_noxfile(tmp_path, "onnx-compat==0.2", RUNNING)  # appended: the builtins helper
    assert "with open(stamp" in (tmp_path / "noxfile.py").read_text()
    edit = noxfile_edit(tmp_path, 'it "quoted" é', RUNNING, given=True)
    apply(tmp_path, edit)
    text = (tmp_path / "noxfile.py").read_text()
    assert installed(text) == 'it "quoted" é' and "def lint(" in text
