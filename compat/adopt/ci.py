"""`init --ci github`: a GitHub Actions workflow that plans the matrix as shards
(`onnx-compat plan --json --shards N`), runs one shard per job (`onnx-compat matrix
--shard K/N`), merges them (`onnx-compat merge`) into the report one job would write,
uploads it and puts the terminal summary on the run's page. The workflow is a file:
compat/resources/github-workflow.yml."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from compat.adopt.files import template

WORKFLOW = Path(".github") / "workflows" / "onnx-compat.yml"

#: the CI systems `init --ci` writes for
CI_CHOICES = ("github",)


def workflow_text(install: str, python: str, shards: int) -> str:
    """The workflow, filled in: what each job installs, the Python, the default shards."""
    text = template("github-workflow.yml")
    filled = {"INSTALL": json.dumps(install)[1:-1], "PYTHON": python, "SHARDS": str(shards)}
    for key, value in filled.items():  # each inside a YAML double-quoted string
        text = text.replace(f"@{key}@", value)
    return text


#: where a wheel given to `init --install` from outside the project is copied, so the
#: workflow's jobs (which see the repository only) install that same wheel
WHEELS = Path(".github") / "onnx-compat"


def ci_install(project: Path, install: str) -> tuple[str, list[str]]:
    """What the workflow installs for `--install`: a pin or a name as given; a wheel in
    the project by its path from the project's root; a wheel elsewhere copied into the
    project first (a file on this machine is not on the CI runner). And what was done."""
    wheel = Path(install)
    if not wheel.is_file():
        return install, []
    wheel = wheel.resolve()
    root = project.resolve()
    if wheel.is_relative_to(root):
        where = wheel.relative_to(root).as_posix()
        return where, [f"{WORKFLOW}: installs {where}: commit it, the jobs see the repository only"]
    copy = project / WHEELS / wheel.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(wheel, copy)
    where = (WHEELS / wheel.name).as_posix()
    return where, [f"{WORKFLOW}: installs {where}, copied from {wheel}: commit it"]


def write_workflow(project: Path, install: str, python: str, shards: int = 4) -> list[str]:
    """Writes the workflow unless the project has one by that name; what was done."""
    path = project / WORKFLOW
    if path.exists():
        return [f"{WORKFLOW}: exists already; left as it is"]
    install, said = ci_install(project, install)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow_text(install, python, shards))
    said.insert(0, f"{WORKFLOW}: written: {shards} shards by default, merged reports uploaded "
                   "as onnx-compat-reports, the summary on the run's page")  # fmt: skip
    return said
