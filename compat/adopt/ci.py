"""`init --ci github`: a GitHub Actions workflow that plans the matrix as shards
(`onnx-compat plan --json --shards N`), runs one shard per job (`onnx-compat matrix
--shard K/N`), merges them (`onnx-compat merge`) into the report one job would write,
uploads it and puts the terminal summary on the run's page. The workflow is a file:
compat/resources/github-workflow.yml.

With `--watch`, also the weekly watch (compat/resources/github-watch.yml): the releases
the index has and that workflow's last reports lack, run with `matrix --new-releases`,
and one issue opened or updated when something changed (`--issue-body`)."""

from __future__ import annotations

import json
from pathlib import Path

from compat.adopt.files import template
from compat.adopt.writes import Edit, apply, check_writable, read_bytes, shown
from compat.core.errors import UsageError

WORKFLOW = Path(".github") / "workflows" / "onnx-compat.yml"
WATCH = Path(".github") / "workflows" / "onnx-compat-watch.yml"

#: the CI systems `init --ci` writes for
CI_CHOICES = ("github",)


def workflow_text(install: str, python: str, shards: int, name: str = "github-workflow.yml") -> str:
    """The workflow, filled in: what each job installs, the Python, the default shards."""
    text = template(name)
    filled = {"INSTALL": json.dumps(install)[1:-1], "PYTHON": python, "SHARDS": str(shards)}
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


def workflow_edits(
    project: Path, install: str, python: str, shards: int = 4, watch: bool = False
) -> list[Edit]:
    """The workflow (and the wheel it installs, copied), unless the project has one by
    that name, and with `watch` the weekly watch; what init says of each."""
    workflow = (project / WORKFLOW).exists()
    if workflow and (not watch or (project / WATCH).exists()):
        edits = [Edit(WORKFLOW, None, [f"{WORKFLOW}: exists already; left as it is"])]
        return [*edits, *([watch_edit(project, install, python)] if watch else [])]
    install, copied = ci_install(project, install)
    said = (
        f"{WORKFLOW}: written: {shards} shards by default, merged reports uploaded as "
        "onnx-compat-reports, the summary on the run's page"
    )
    edits = (
        [Edit(WORKFLOW, None, [f"{WORKFLOW}: exists already; left as it is"])]
        if workflow
        else [Edit(WORKFLOW, workflow_text(install, python, shards).encode(), [said])]
    )
    return [*edits, *([watch_edit(project, install, python)] if watch else []), *copied]


def write_workflow(project: Path, install: str, python: str, shards: int = 4) -> list[str]:
    """Writes the workflow unless the project has one by that name; what was done."""
    edits = workflow_edits(project, install, python, shards)
    for edit in (e for e in edits if e.data is not None):  # every one, before any is written
        check_writable(project, edit.path)
    for edit in edits:
        apply(project, edit)
    return [line for edit in edits for line in edit.said]
