"""Check an adopted project's matrix against plain venvs: the same failing tests, per cell.

    nox -s bench -- plain_venvs REPORT_DIR [REPORT_DIR ...] [--project DIR]
                                [--cells GLOB] [--sample N] [--jobs N] [--json FILE]

A check, not a timing. REPORT_DIR is the reports/ folder of a project's `nox -s matrix`
(give two, of two runs in a row, to check both against the same plain venvs). Each
cell records every distribution it installed (matrix.json → `cells[].installed`) and
the Python it ran on (`cells[].python`); each command result names its log
(`results[].log`, under REPORT_DIR), which holds every attempt, the first one whole.
The tool's failing test ids are read from that first attempt with the parser the tool
itself uses (compat/cell/outputs.py `failing_ids`: pytest's FAILED/ERROR lines,
unittest's FAIL:/ERROR: headers). A result served from an earlier run has no log of
this run: give the reports of a run that computed it (`nox -s matrix -- --fresh`).

The cells checked: every cell whose command ran (pass, fail or flaky in the first
REPORT_DIR), or those whose id matches `--cells GLOB`, or `--sample N` of them spread
over the Pythons and both axes. For each: a plain `uv venv --python X.Y.Z` (the cell's
own Python), `uv pip install COPY NAME==VERSION …` with exactly the cell's installed
versions (the project itself built from COPY by its own backend), its installed set
compared with the cell's; then the same command through the shell in COPY, a fresh
copy of the project (git's tracked and untracked-not-ignored files, as the tool copies
it; --project, default REPORT_DIR's parent or its `project/`), with the venv's bin/
first on PATH and no other Python environment on it. Its failing ids are parsed the
same way.

Prints a markdown table (cell, command, the tool's failing ids per run, the plain
venv's, same or different) and each difference in full; exits 1 when any cell differs
(or could not be checked: no log, an install that failed or installed other versions).
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from adopting import clean_env, fresh_copy, interpreter, tree
from timing import ROOT, machine

#: outcomes of a command that ran (an error is a command the cell could not start)
RAN = ("pass", "fail", "flaky")
#: the line a rerun's attempt starts with in a command's log (compat/cell/attempt.py)
ATTEMPT = "\n\n# ---- attempt 2:"


def failing_ids(output: str) -> list[str]:
    """The failing test ids in a command's output, by the tool's own parser (compat/cell/
    outputs.py, this checkout's)."""
    sys.path.insert(0, str(ROOT))
    from compat.cell.outputs import failing_ids as parse

    return parse(output)


@dataclass
class Check:
    """One cell's command: what the tool's runs found and what a plain venv finds."""

    cell: dict
    case: str
    command: str
    tool: list[list[str] | None]  # per REPORT_DIR; None: no log to read
    plain: list[str] | None = None
    exit_code: int | None = None
    problem: str = ""  # why the plain venv could not be compared

    @property
    def same(self) -> bool:
        if self.problem or self.plain is None or any(t is None for t in self.tool):
            return False
        return all(set(t or ()) == set(self.plain) for t in self.tool)


def tool_ids(reports: Path, result: dict) -> list[str] | None:
    """The failing ids of the first attempt in the result's log, or None without one."""
    log = result.get("log")
    if not log or not (reports / log).is_file():
        return None
    first = (reports / log).read_text(errors="replace").split(ATTEMPT)[0]
    return failing_ids(first)


def spread(cells: list[dict], n: int) -> list[dict]:
    """`n` of `cells`, spread evenly over them ordered by Python, onnx and onnxruntime."""
    if n >= len(cells):
        return cells
    key = [tuple(int(p) for p in c["python"].split(".")) for c in cells]

    def order(i: int) -> tuple[tuple[int, ...], ...]:
        versions = [tuple(map(int, cells[i][k].split(".")[:3])) for k in ("onnx", "onnxruntime")]
        return (key[i], *versions)

    ordered = sorted(range(len(cells)), key=order)
    chosen = {ordered[round(i * (len(ordered) - 1) / max(n - 1, 1))] for i in range(n)}
    return [cells[i] for i in sorted(chosen, key=order)]


def checks(dirs: list[Path], glob: str | None, sample: int | None) -> list[Check]:
    """The cells' commands to check, with the tool's failing ids from each report."""
    loaded = [json.loads((d / "matrix.json").read_text()) for d in dirs]
    commands = {c["id"]: c["description"] for c in loaded[0]["cases"] if c["family"] == "command"}
    results = [{(r["cell"], r["case"]): r for r in data["results"]} for data in loaded]
    ran = {
        cell for (cell, case), r in results[0].items() if case in commands and r["outcome"] in RAN
    }
    cells = [c for c in loaded[0]["cells"] if c["id"] in ran]
    if glob:
        cells = [c for c in cells if fnmatch.fnmatchcase(c["id"], glob)]
    if sample:
        cells = spread(cells, sample)
    found = []
    for cell in cells:
        for case, command in commands.items():
            if (cell["id"], case) not in results[0]:
                continue
            tool = []
            for d, data, by in zip(dirs, loaded, results, strict=True):
                other = next((c for c in data["cells"] if c["id"] == cell["id"]), None)
                if other is None or other.get("installed") != cell.get("installed"):
                    sys.exit(f"{d}: cell {cell['id']} is missing or installed other versions")
                result = by.get((cell["id"], case))
                tool.append(tool_ids(d, result) if result else None)
            found.append(Check(cell, case, command, tool))
    return found


def uv(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["uv", *map(str, args)], capture_output=True, text=True, check=False)


def installed(python: Path) -> dict[str, str]:
    done = uv("pip", "list", "--python", python, "--format", "json")
    try:
        return {d["name"].lower(): d["version"] for d in json.loads(done.stdout)}
    except ValueError:
        return {}


def canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def plain(check: Check, project: Path, name: str, files: list[str], scratch: Path) -> None:
    """The command in a plain venv with the cell's Python and installed versions, in a
    fresh copy of the project; fills `check` in."""
    folder = scratch / check.cell["id"]
    copy = fresh_copy(project, files, folder / "project")
    venv = folder / "venv"
    made = uv("venv", "-q", "--python", interpreter(check.cell, project), venv)
    if made.returncode != 0:
        check.problem = f"uv venv: {made.stderr.strip()[-300:]}"
        return
    python = venv / "bin" / "python"
    said = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if said != check.cell["python"]:
        check.problem = f"the plain venv's Python is {said}, the cell's {check.cell['python']}"
        return
    want = {canonical(k): v for k, v in check.cell["installed"].items()}
    pins = [f"{k}=={v}" for k, v in sorted(want.items()) if k != name]
    done = uv("pip", "install", "-q", "--python", python, copy, *pins)
    if done.returncode != 0:
        check.problem = f"install failed: {done.stderr.strip()[-300:]}"
        return
    got = {canonical(k): v for k, v in installed(python).items()}
    if got != want:
        odd = sorted(set(got.items()) ^ set(want.items()))
        check.problem = f"installed other versions than the cell: {odd}"
        return
    ran = subprocess.run(
        check.command,
        shell=True,
        cwd=copy,
        env=clean_env(venv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=1800,
        check=False,
    )
    output = ran.stdout.decode(errors="replace")
    (folder / "output.log").write_text(output)
    check.exit_code = ran.returncode
    check.plain = failing_ids(output)


def label(ids: list[str]) -> str:
    """A short name for a set of failing ids: their count and a digest of the set."""
    digest = hashlib.sha256("\n".join(sorted(set(ids))).encode()).hexdigest()[:6]
    return f"{len(set(ids))} ({digest})"


def shown(ids: list[str] | None) -> str:
    if ids is None:
        return "no log"
    return label(ids) if ids else "none"


def report(found: list[Check], runs: int) -> str:
    """The table, then each distinct set of failing ids once, under its label."""
    head = " | ".join(f"tool, run {i + 1}" for i in range(runs))
    lines = [f"| cell | command | {head} | plain venv | same |", "|---" * (runs + 4) + "|"]
    sets: dict[str, list[str]] = {}
    for c in found:
        plainly = c.problem[:80] if c.problem else shown(c.plain)
        tools = " | ".join(shown(t) for t in c.tool)
        verdict = "same" if c.same else "**different**"
        lines.append(f"| {c.cell['id']} | {c.case} | {tools} | {plainly} | {verdict} |")
        for ids in [*c.tool, c.plain]:
            if ids:
                sets.setdefault(label(ids), sorted(set(ids)))
    for name, ids in sets.items():
        lines.append(f"\nfailing ids {name}:\n" + "\n".join(f"- `{i}`" for i in ids))
    return "\n".join(lines)


def differences(found: list[Check]) -> list[str]:
    said = []
    for c in found:
        if c.same:
            continue
        if c.problem or c.plain is None:
            said.append(f"{c.cell['id']} {c.case}: {c.problem or 'the plain venv never ran'}")
            continue
        for i, tool in enumerate(c.tool, start=1):
            if tool is None:
                said.append(
                    f"{c.cell['id']} {c.case}, run {i}: no log (served from an earlier run)"
                )
            elif set(tool) != set(c.plain):
                only_tool = sorted(set(tool) - set(c.plain))
                only_plain = sorted(set(c.plain) - set(tool))
                said.append(
                    f"{c.cell['id']} {c.case}, run {i}: only the tool's {only_tool}; "
                    f"only the plain venv's {only_plain}"
                )
    return said


def project_of(reports: Path, given: Path | None) -> Path:
    if given is not None:
        return given.resolve()
    for candidate in (reports.parent, reports.parent / "project"):
        if (candidate / "pyproject.toml").is_file() or (candidate / "setup.py").is_file():
            return candidate.resolve()
    sys.exit(f"no project beside {reports}: give --project DIR")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("reports", type=Path, nargs="+", help="a matrix's reports/ folder")
    parser.add_argument("--project", type=Path, help="the adopted project's folder")
    parser.add_argument("--cells", help="only the cells whose id matches this glob")
    parser.add_argument("--sample", type=int, help="N cells spread over the axes")
    parser.add_argument("--jobs", type=int, default=1, help="plain venvs at a time")
    parser.add_argument("--json", type=Path, help="write every check here")
    parser.add_argument("--keep", type=Path, help="keep the plain venvs and copies here")
    options = parser.parse_args()
    project = project_of(options.reports[0], options.project)
    data = tomllib.loads((project / "pyproject.toml").read_text())
    name = canonical(data.get("project", {}).get("name", project.name))
    found = checks(options.reports, options.cells, options.sample)
    print(f"started {machine()}; {len(found)} cells' commands, project {project}", flush=True)
    files = tree(project)
    scratch = options.keep or Path(tempfile.mkdtemp(prefix="compat-plain-venvs-"))
    try:
        with ThreadPoolExecutor(max(1, options.jobs)) as pool:
            done = pool.map(lambda c: plain(c, project, name, files, scratch), found)
            for c, _ in zip(found, done, strict=True):
                print(f"  {c.cell['id']}: {'same' if c.same else 'different'}", flush=True)
    finally:
        if options.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"ended {machine()}\n")
    print(report(found, len(options.reports)))
    said = differences(found)
    print("\n" + ("\n".join(said) if said else f"all {len(found)} the same"))
    if options.json:
        keys = ("case", "command", "tool", "plain", "exit_code", "problem")
        rows = [{"cell": c.cell["id"], **{k: getattr(c, k) for k in keys}} for c in found]
        options.json.write_text(json.dumps(rows, indent=1))
    return 1 if said else 0


if __name__ == "__main__":
    sys.exit(main())
