"""`init --ci github`: a GitHub Actions workflow that plans the matrix as shards
(`onnx-compat plan --json --shards N`), runs one shard per job (`onnx-compat matrix
--shard K/N`), merges them (`onnx-compat merge`) into the report one job would write,
uploads it and puts the terminal summary on the run's page. The workflow is a file:
compat/resources/github-workflow.yml.

With `--watch`, also the weekly watch (compat/resources/github-watch.yml): the releases
the index has and that workflow's last reports lack, run with `matrix --new-releases`,
and one issue opened or updated when something changed (`--issue-body`).

Pushes to the default branch run the workflow: the branch the remote's HEAD names, else
the one checked out, else main (`--branch` replaces it). `--gate new` makes pull
requests fail only on what the base branch's committed results lack."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from compat.adopt.files import template
from compat.adopt.writes import Edit, apply, check_writable, read_bytes, shown
from compat.core.errors import UsageError

WORKFLOW = Path(".github") / "workflows" / "onnx-compat.yml"
WATCH = Path(".github") / "workflows" / "onnx-compat-watch.yml"

#: the CI systems `init --ci` writes for
CI_CHOICES = ("github",)


#: what `--gate` takes: what fails a pull request (the values of `matrix --fail-on`)
GATES = ("unexpected", "new")


def default_branch(project: Path) -> tuple[str, str]:
    """The branch whose pushes run the workflow, and where init read it: the remote's
    default (origin/HEAD), else the branch checked out, else main."""
    for ref in ("refs/remotes/origin/HEAD", "HEAD"):
        try:
            done = subprocess.run(
                ["git", "-C", str(project), "symbolic-ref", "--quiet", "--short", ref],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )
        except (OSError, subprocess.SubprocessError):  # no git, or it hangs
            break
        name = done.stdout.strip()
        if done.returncode == 0 and name:
            if ref == "HEAD":
                return name, "the branch checked out"
            return name.removeprefix("origin/"), "the default branch of git remote origin"
    return "main", "no git branch found"


def workflow_text(
    install: str,
    python: str,
    shards: int,
    name: str = "github-workflow.yml",
    branch: str = "main",
    gate: str = "unexpected",
) -> str:
    """The workflow, filled in: what each job installs, the Python, the default shards,
    the branch whose pushes run it and what fails a pull request."""
    text = template(name)
    filled = {
        "INSTALL": json.dumps(install)[1:-1],
        "PYTHON": python,
        "SHARDS": str(shards),
        "BRANCH": json.dumps(branch)[1:-1],
        "GATE": gate,
    }
    for key, value in filled.items():  # each inside a YAML double-quoted string
        text = text.replace(f"@{key}@", value)
    return text


#: where a wheel given to `init --install` from outside the project is copied, so the
#: workflow's jobs (which see the repository only) install that same wheel
WHEELS = Path(".github") / "onnx-compat"


#: the largest wheel `--install` may name for the workflow
WHEEL_BYTES = 512 * 2**20


def ci_install(project: Path, install: str) -> tuple[str, list[Edit]]:
    """What the workflow installs for `--install`: a pin or a name as given; a wheel in
    the project by its path from the project's root; a wheel elsewhere copied into the
    project first (a file on this machine is not on the CI runner): that copy's edit."""
    wheel = Path(install)
    if not wheel.is_file():
        return install, []
    wheel = wheel.resolve()
    root = project.resolve()
    if wheel.is_relative_to(root):
        where = wheel.relative_to(root).as_posix()
        said = f"{WORKFLOW}: installs {where}: commit it, the jobs see the repository only"
        return where, [Edit(WORKFLOW, None, [said])]
    data = read_bytes(wheel, WHEEL_BYTES)
    if data is None:
        raise UsageError(
            f"--install {shown(install)}: cannot read it (over {WHEEL_BYTES // 2**20} MB, or "
            "unreadable), to copy it where the CI jobs find it: give a readable wheel"
        )
    where = (WHEELS / wheel.name).as_posix()
    said = f"{WORKFLOW}: installs {where}, copied from {wheel}: commit it"
    return where, [Edit(WHEELS / wheel.name, data, [said])]


def watch_edit(project: Path, install: str, python: str) -> Edit:
    """The weekly watch, unless the project has one by that name; what init says of it."""
    if (project / WATCH).exists():
        return Edit(WATCH, None, [f"{WATCH}: exists already; left as it is"])
    said = (
        f"{WATCH}: written: weekly, the releases the index has and {WORKFLOW.name}'s last "
        "reports lack (onnx-weekly's newest build too), one issue labelled "
        "onnx-compat-watch opened or updated when something changed"
    )
    return Edit(WATCH, workflow_text(install, python, 0, "github-watch.yml").encode(), [said])


def _written(shards: int, branch: tuple[str, str], gate: str) -> list[str]:
    """What init says of the workflow it writes."""
    name, where = branch
    said = [
        f"{WORKFLOW}: written: {shards} shards by default, merged reports uploaded as "
        "onnx-compat-reports, the summary on the run's page",
        f"  runs on pushes to {name} ({where}), pull requests, weekly"
        if where == "--branch"
        else f"  runs on pushes to {name} ({where}; --branch replaces it), pull requests, weekly",
    ]
    if gate == "new":
        said.append(
            "  a pull request fails only on what the base branch's committed results lack "
            "(--baseline git:origin/BASE --fail-on new): commit them there first, "
            "docs/matrix.json.gz (docs/how-to/baseline.md)"
        )
    return said


def workflow_edits(
    project: Path,
    install: str,
    python: str,
    shards: int = 4,
    watch: bool = False,
    branch: tuple[str, str] = ("main", "no git branch found"),
    gate: str = "unexpected",
) -> list[Edit]:
    """The workflow (and the wheel it installs, copied), unless the project has one by
    that name, and with `watch` the weekly watch; what init says of each. `branch`: the
    branch whose pushes run it, and where that was read; `gate`: what fails a pull
    request (GATES)."""
    workflow = (project / WORKFLOW).exists()
    if workflow and (not watch or (project / WATCH).exists()):
        edits = [Edit(WORKFLOW, None, [f"{WORKFLOW}: exists already; left as it is"])]
        return [*edits, *([watch_edit(project, install, python)] if watch else [])]
    install, copied = ci_install(project, install)
    text = workflow_text(install, python, shards, branch=branch[0], gate=gate)
    edits = (
        [Edit(WORKFLOW, None, [f"{WORKFLOW}: exists already; left as it is"])]
        if workflow
        else [Edit(WORKFLOW, text.encode(), _written(shards, branch, gate))]
    )
    return [*edits, *([watch_edit(project, install, python)] if watch else []), *copied]


def write_workflow(
    project: Path,
    install: str,
    python: str,
    shards: int = 4,
    branch: tuple[str, str] = ("main", "no git branch found"),
    gate: str = "unexpected",
) -> list[str]:
    """Writes the workflow unless the project has one by that name; what was done."""
    edits = workflow_edits(project, install, python, shards, branch=branch, gate=gate)
    for edit in (e for e in edits if e.data is not None):  # every one, before any is written
        check_writable(project, edit.path)
    for edit in edits:
        apply(project, edit)
    return [line for edit in edits for line in edit.said]
