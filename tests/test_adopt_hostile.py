"""`onnx-compat init` in a hostile project (issue 34): it writes no file through a link or
outside the project, escapes every string it writes (the pyproject.toml it leaves
parses), walks the test folders within bounds, and says what is wrong with a broken
pyproject.toml in one line. Each test runs the real CLI on real files; the package index
is made unreachable (a proxy on a port that refuses), so init writes its fixed lists."""

from __future__ import annotations

import ast
import json
import os
import socket
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from compat.adopt.testsource import WALK_LIMIT
from compat.cli.main import main
from compat.plan.config import load_config

pytestmark = pytest.mark.subprocess

LINK_REFUSED = "init writes no file through a link: replace it with {} or remove it"


@pytest.fixture(scope="module")
def refusing_proxy() -> Iterator[str]:
    """A proxy address that refuses: a port bound and never listened on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "kept.txt").write_text("the user's\n")
    (tmp_path / "project" / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    return tmp_path / "project"


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder`, links not followed: a file's bytes, a link's target."""
    found: dict[str, bytes | str] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            key = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found[key] = f"-> {path.readlink()}"
            elif path.is_file():
                found[key] = path.read_bytes()
            else:
                found[key] = "folder" if path.is_dir() else "other"
    return found


def _init(project: Path, proxy: str, *args: str | bytes) -> subprocess.CompletedProcess[str]:
    """`python -m compat init ARGS` in `project`, the package index unreachable."""
    env = {**os.environ, "https_proxy": proxy, "HTTPS_PROXY": proxy}
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)
    command = [sys.executable, "-m", "compat", "init", "--python", "none", *args]
    return subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _refused(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == f"onnx-compat: error: {message}\n"
    assert done.stdout == ""


@pytest.mark.parametrize("name", ["noxfile.py", "pyproject.toml", ".gitignore"])
def test_a_dangling_link_is_refused_and_nothing_is_made_outside(
    project: Path, refusing_proxy: str, name: str
) -> None:
    (project / name).unlink(missing_ok=True)
    (project / name).symlink_to(project.parent / "outside" / "made")
    before = _tree(project.parent)
    done = _init(project, refusing_proxy)
    target = project.parent / "outside" / "made"
    _refused(done, f"{name} is a symlink to {target}; {LINK_REFUSED.format('a file')}")
    assert _tree(project.parent) == before  # nothing made, inside the project or out


def test_a_gitignore_linked_to_an_outside_file_gains_no_line(
    project: Path, refusing_proxy: str
) -> None:
    (project / ".gitignore").symlink_to("../outside/kept.txt")
    before = _tree(project.parent)
    _refused(
        _init(project, refusing_proxy),
        f".gitignore is a symlink to ../outside/kept.txt; {LINK_REFUSED.format('a file')}",
    )
    assert _tree(project.parent) == before


def test_a_linked_file_init_only_reads_is_read_and_left(project: Path, refusing_proxy: str) -> None:
    """Writing is refused, not reading: a pyproject.toml linked to a file that has its
    [tool.compat] already is read through the link and left as it is."""
    (project.parent / "outside" / "pyproject.toml").write_text(
        '[project]\nname = "mine"\n\n[tool.compat]\nrun = ["pytest"]\n'
    )
    (project / "pyproject.toml").unlink()
    (project / "pyproject.toml").symlink_to("../outside/pyproject.toml")
    outside = _tree(project.parent / "outside")
    done = _init(project, refusing_proxy)
    assert done.returncode == 0, done.stderr
    assert "pyproject.toml: has a [tool.compat] section already; left as it is" in done.stdout
    assert _tree(project.parent / "outside") == outside
    assert (project / "noxfile.py").is_file() and not (project / "noxfile.py").is_symlink()


def test_a_linked_github_folder_gets_no_workflow(project: Path, refusing_proxy: str) -> None:
    (project.parent / "outside" / "gh").mkdir()
    (project / ".github").symlink_to(project.parent / "outside" / "gh")
    before = _tree(project.parent)
    done = _init(project, refusing_proxy, "--ci", "github")
    target = project.parent / "outside" / "gh"
    _refused(done, f".github is a symlink to {target}; {LINK_REFUSED.format('a folder')}")
    assert _tree(project.parent) == before


def test_newlines_quotes_and_control_characters_are_written_escaped(
    project: Path, refusing_proxy: str
) -> None:
    runs = ["t=a\nb", 'u=say "hi" \\ \x01\x7f\ttab', "v=é ☃\r\n"]
    models = "m\nx"
    install = 'onnx-compat==0.2\n"x\\'
    (project / models).mkdir()
    before = _tree(project.parent / "outside")
    args = [a for run in runs for a in ("--run", run)]
    done = _init(
        project, refusing_proxy, *args, "--models", models, "--install", install, "--ci", "github"
    )
    assert done.returncode == 0, done.stderr
    with (project / "pyproject.toml").open("rb") as f:
        written = tomllib.load(f)
    assert written["project"] == {"name": "mine"}
    assert written["tool"]["compat"]["run"] == runs
    assert written["tool"]["compat"]["cases-dirs"] == [models]
    config = load_config(project / "pyproject.toml")  # and the matrix reads it so
    assert config.run == tuple(runs) and config.cases_dirs == (project / models,)
    tree = ast.parse((project / "noxfile.py").read_text())
    assigned = [n for n in tree.body if isinstance(n, ast.Assign)]
    assert [ast.literal_eval(n.value) for n in assigned] == [install]
    workflow = (project / ".github" / "workflows" / "onnx-compat.yml").read_text()
    line = next(x for x in workflow.splitlines() if x.strip().startswith("ONNX_COMPAT:"))
    quoted = line.split(":", 1)[1].split("  #")[0].strip()
    assert json.loads(quoted) == install  # a YAML double-quoted string, JSON's escapes
    assert _tree(project.parent / "outside") == before


def test_bytes_that_are_not_utf8_and_nul_are_one_line_before_anything_is_written(
    project: Path,
    refusing_proxy: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = _tree(project)
    done = _init(project, refusing_proxy, "--run", b"t=a\xffb")  # as a shell passes it
    message = "holds bytes that are not UTF-8 text, which a TOML file cannot hold"
    _refused(done, f"--run 't=a\\udcffb': {message}: give it as UTF-8")
    monkeypatch.chdir(project)  # no argv holds a NUL: the CLI in this process, then
    assert main(["init", "--models", "m\0x"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "onnx-compat: error: --models 'm\\x00x': holds a NUL character, which no path can: "
        "remove it\n"
    )
    assert _tree(project) == before


def test_the_walk_follows_no_link_and_opens_no_fifo(project: Path, refusing_proxy: str) -> None:
    outside = project.parent / "outside"
    (outside / "test_elsewhere.py").write_text("import outside_only\n")
    tests = project / "tests"
    tests.mkdir()
    (tests / "test_mine.py").write_text("import hypothesis\n")
    os.mkfifo(tests / "test_blocks.py")  # opened, it would block init for good
    os.mkfifo(project / "tox.ini")
    (tests / "usr").symlink_to("/usr")
    (tests / "linked").symlink_to(outside)
    (tests / "test_linked.py").symlink_to(outside / "test_elsewhere.py")
    done = _init(project, refusing_proxy)
    assert done.returncode == 0, done.stderr
    assert "  tests: 1 file in tests/" in done.stdout
    compat = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["compat"]
    assert compat["requires"] == ["hypothesis", "pytest"]  # no outside_only


def test_a_linked_test_folder_is_not_walked_and_said(project: Path, refusing_proxy: str) -> None:
    (project / "tests").symlink_to("/usr")
    done = _init(project, refusing_proxy)
    assert done.returncode == 0, done.stderr
    assert (
        "  tests/ is a symlink to /usr: not read, init follows no link: list what its tests "
        "import in `requires` yourself"
    ) in done.stdout.splitlines()


def test_the_walk_stops_at_its_limit_and_says_so(project: Path, refusing_proxy: str) -> None:
    tests = project / "tests"
    (tests / "data").mkdir(parents=True)
    (tests / "test_mine.py").write_text("import hypothesis\n")
    for i in range(WALK_LIMIT):
        (tests / "data" / f"f{i}").touch()
    (tests / "data" / "zz").mkdir()
    (tests / "data" / "zz" / "test_late.py").write_text("import never_seen\n")
    done = _init(project, refusing_proxy)
    assert done.returncode == 0, done.stderr
    said = (
        f"  read the first {WALK_LIMIT} files and folders of tests/ only: check the guessed "
        "`requires` and `run`"
    )
    assert said in done.stdout.splitlines()
    compat = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["compat"]
    assert compat["requires"] == ["hypothesis", "pytest"]


PEP = "as PEP 621 and PEP 735 define it, then run init again"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"[project\n",
            "pyproject.toml is not valid TOML: Expected ']' at the end of a table "
            "declaration (at line 1, column 9): fix it (pip, uv and nox cannot read it either), "
            "then run init again",
        ),
        (
            b'[project]\nname = "\xff"\n',
            "pyproject.toml is not UTF-8 text (byte 0xff at "
            "offset 18): save it as UTF-8, then run init again",
        ),
        (
            b'project = "x"\n',
            "pyproject.toml: `project` is a string ('x'), not a table: "
            f"write it as a [project] table, {PEP}",
        ),
        (
            b"[project]\ndependencies = 3\n",
            "pyproject.toml: `project.dependencies` is an "
            f"integer (3), not an array: write it as an array, {PEP}",
        ),
        (
            b'[dependency-groups]\ntest = "pytest"\n',
            "pyproject.toml: `dependency-groups.test`"
            f" is a string ('pytest'), not an array: write it as an array, {PEP}",
        ),
        (
            b"tool = {black = {}}\n",
            "pyproject.toml: with [tool.compat] appended it would not "
            "be valid TOML (Cannot declare ('tool', 'compat') twice (at line 6, column 13)), so "
            "nothing was written: a `tool = {...}` inline table cannot gain it: write [tool] as "
            "a table, or add [tool.compat] by hand",
        ),
    ],
)
def test_a_broken_pyproject_is_one_line_naming_it_and_the_fix(
    project: Path, refusing_proxy: str, content: bytes, message: str
) -> None:
    (project / "pyproject.toml").write_bytes(content)
    before = _tree(project)
    _refused(_init(project, refusing_proxy), message)
    assert _tree(project) == before


@pytest.mark.parametrize(("make", "kind"), [(Path.mkdir, "a folder"), (os.mkfifo, "a FIFO")])
def test_a_pyproject_that_is_no_file_is_one_line(
    project: Path, refusing_proxy: str, make: Callable[[Path], object], kind: str
) -> None:
    (project / "pyproject.toml").unlink()
    make(project / "pyproject.toml")
    before = _tree(project)
    _refused(
        _init(project, refusing_proxy),
        f"pyproject.toml is {kind}, not a file: init reads and extends a file of that name: "
        "move it away, then run init again",
    )
    assert _tree(project) == before


@contextmanager
def _freeze(path: Path) -> Iterator[None]:
    """`path` made unwritable while the test runs: read-only for a user; for root (whom
    permissions do not stop) immutable, or the test is skipped where chattr is refused."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"root, and chattr +i refused here: {done.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.parametrize("frozen", ["pyproject.toml", "."])
def test_an_unwritable_pyproject_or_folder_is_one_line(
    project: Path, refusing_proxy: str, frozen: str
) -> None:
    before = _tree(project)
    with _freeze(project / frozen):
        done = _init(project, refusing_proxy)
    if frozen == ".":
        message = f"{project}: a folder init cannot write in (read-only or immutable), and "
        message += "it writes noxfile.py there: make it writable (chmod u+w, chattr -i)"
    else:
        message = "pyproject.toml is read-only or immutable: init extends it: make it "
        message += "writable (chmod u+w, chattr -i), or add its part by hand"
    _refused(done, message)
    assert _tree(project) == before


def test_a_replaced_file_keeps_its_mode_and_owner_and_no_temporary_file(
    project: Path, refusing_proxy: str
) -> None:
    """init replaces pyproject.toml through a new file: the user's file stays theirs."""
    path = project / "pyproject.toml"
    path.chmod(0o640)
    owner = (12345, 54321) if os.geteuid() == 0 else (path.stat().st_uid, path.stat().st_gid)
    if os.geteuid() == 0:
        os.chown(path, *owner)
    done = _init(project, refusing_proxy)
    assert done.returncode == 0, done.stderr
    assert "[tool.compat]" in path.read_text()
    status = path.stat()
    assert (status.st_mode & 0o777, status.st_uid, status.st_gid) == (0o640, *owner)
    assert sorted(p.name for p in project.iterdir()) == [".gitignore", "noxfile.py", path.name]
