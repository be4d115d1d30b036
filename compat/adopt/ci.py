"""`init --ci github`: a GitHub Actions workflow that plans the matrix as shards
(`onnx-compat plan --json --shards N`), runs one shard per job (`onnx-compat matrix
--shard K/N`), merges them (`onnx-compat merge`) into the report one job would write,
uploads it and puts the terminal summary on the run's page. The workflow is a file:
compat/resources/github-workflow.yml."""

from __future__ import annotations

import json
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


def write_workflow(project: Path, install: str, python: str, shards: int = 4) -> list[str]:
    """Writes the workflow unless the project has one by that name; what was done."""
    path = project / WORKFLOW
    if path.exists():
        return [f"{WORKFLOW}: exists already; left as it is"]
    said = []
    if Path(install).is_file():  # a wheel on this machine is not on the CI runner
        said.append(f"{WORKFLOW}: installs onnx-compat from the package index, not {install}")
        install = "onnx-compat"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow_text(install, python, shards))
    said.insert(0, f"{WORKFLOW}: written: {shards} shards by default, merged reports uploaded "
                   "as onnx-compat-reports, the summary on the run's page")  # fmt: skip
    return said
