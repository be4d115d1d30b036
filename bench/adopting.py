"""A user's side of an adopted project, as docs/how-to/adopt.md sets it up: a clone of
one commit of onnx-compat, its wheel, a developer's venv with it, and what the project's
`nox -s matrix` ended with; and the plain side: a fresh copy of the project, a shell
with a plain venv active. Not a bench itself: bench/project_rerun.py,
bench/converter_matrix.py and bench/plain_venvs.py import it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from timing import ROOT, Run, clone, run

#: what the tool removes from a command's environment: other Python environments
OTHER = {
    *("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "CONDA_PREFIX", "CONDA_DEFAULT_ENV"),
    *("PYENV_VERSION", "PYENV_VIRTUAL_ENV", "VIRTUAL_ENV", "UV_PYTHON"),
}


def developer(side: Path, commit: str, *more: str) -> tuple[Path, dict[str, str]]:
    """A clone of `commit` in `side`/repo, its wheel built with `uv build --wheel`, and
    the environment of a developer's shell: a venv with that wheel, nox, uv and `more`,
    active and first on PATH."""
    repo = clone(commit, side / "repo")
    run(["uv", "build", "--quiet", "--wheel", "--out-dir", side / "wheel", repo], cwd=repo)
    (wheel,) = (side / "wheel").glob("onnx_compat-*.whl")
    dev = side / "dev"
    run(["uv", "venv", "--quiet", "--python", sys.executable, dev])
    python = dev / "bin" / "python"
    run(["uv", "pip", "install", "--quiet", "--python", python, wheel, "nox", "uv", *more])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(VIRTUAL_ENV=str(dev), PATH=f"{dev / 'bin'}{os.pathsep}{env['PATH']}")
    return wheel, env


def resolved(side: Path) -> str:
    """The commit `side`'s clone is at, abbreviated (HEAD named as it was)."""
    done = subprocess.run(
        ["git", "-C", side / "repo", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def provenance(done: Run) -> str:
    """The terminal's "N computed, … from earlier runs, N reruns" line (or its "nothing
    changed since the last run")."""
    lines = [
        line.strip()
        for line in done.stdout.splitlines()
        if " computed, " in line or "nothing changed since the last run" in line
    ]
    return lines[-1] if lines else "?"


def cells(project: Path) -> str:
    """The cells of the project's last run (reports/matrix.json), by state: "125 cells:
    90 ready, 35 no-wheel"."""
    report = json.loads((project / "reports" / "matrix.json").read_text())
    states = Counter(c["state"] for c in report["cells"])
    said = ", ".join(f"{n} {state}" for state, n in states.most_common())
    return f"{len(report['cells'])} cells: {said}"


def outcomes(project: Path, family: str = "command.") -> str:
    """The project's commands' outcomes in its last run: "61 fail, 29 pass"."""
    report = json.loads((project / "reports" / "matrix.json").read_text())
    counts = Counter(r["outcome"] for r in report["results"] if r["case"].startswith(family))
    return ", ".join(f"{n} {outcome}" for outcome, n in counts.most_common()) or "none"


def interpreter(cell: dict, project: Path) -> str:
    """The cell's own base interpreter (its environment's pyvenv.cfg `home`), else the
    one the tool would find for its Python (compat/plan/pythons.py: pyenv's, asdf's and
    uv's folders; pyenv's shims answer only for the global version)."""
    cfg = project / ".compat" / "envs" / cell["id"] / "pyvenv.cfg"
    minor = ".".join(cell["python"].split(".")[:2])
    if cfg.is_file():
        lines = (line.partition("=") for line in cfg.read_text().splitlines())
        home = next((v.strip() for k, _, v in lines if k.strip() == "home"), "")
        if home and (Path(home) / f"python{minor}").is_file():
            return str(Path(home) / f"python{minor}")
    sys.path.insert(0, str(ROOT))
    from compat.plan.pythons import find_python

    return find_python(minor)


def tree(project: Path) -> list[str]:
    """The project's files as the tool copies them: git's tracked and untracked but not
    ignored files (reports/, .compat/ and .nox/ are ignored where init wrote .gitignore)."""
    done = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=project,
        capture_output=True,
        check=True,
    )
    names = [n for n in done.stdout.decode().split("\0") if n]
    return [n for n in names if n.split("/", 1)[0] not in ("reports", ".compat", ".nox")]


def fresh_copy(project: Path, files: list[str], where: Path) -> Path:
    """`files` of `project` copied into `where`: a copy that no run has written into."""
    for name in files:
        source = project / name
        if source.is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / name)
    return where


def clean_env(venv: Path) -> dict[str, str]:
    """A shell with the plain venv active and no other Python environment on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in OTHER}
    keep = [
        entry
        for entry in env.get("PATH", "").split(os.pathsep)
        if entry
        and ".pyenv" not in Path(entry).parts
        and not (Path(entry).parent / "pyvenv.cfg").exists()
    ]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *keep])
    env["VIRTUAL_ENV"] = str(venv)
    return env
