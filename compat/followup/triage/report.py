"""Triage's output folder: report.md (every finding, ready to paste upstream), one
folder per finding with its own report.md, minimal.onnx + minimal.npz, repro.py with
requirements.txt (the failing release) and requirements-good.txt (the passing one),
and triage.json, the same facts for programs. Each finding's section of report.md is
written by compat/followup/triage/finding_report.py."""

from __future__ import annotations

import json
import platform
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx

from compat.cell.checks_ort import WITHIN
from compat.core.printed import axis_python
from compat.followup.cut import nodes_in_bodies
from compat.followup.repro import python_note, write_script
from compat.followup.triage.common import clip, plural
from compat.followup.triage.finding_report import finding_markdown
from compat.render.text import md_text

if TYPE_CHECKING:
    from compat.core.case import Case
    from compat.core.outcomes import CheckResult
    from compat.core.report import Report
    from compat.followup.triage.triaged import Triaged


def folder_name(number: int, item: Triaged) -> str:
    return f"{number}-{item.finding.check}-{item.finding.package}"


def _summary(item: Triaged, folder: str) -> dict[str, Any]:
    finding = item.finding
    minimal = item.minimal
    return {
        "check": finding.check,
        "package": finding.package,
        "kind": finding.kind,
        "last_bad": finding.last_bad,
        "first_good": finding.first_good,
        "last_good": finding.last_good,
        "first_bad": finding.first_bad,
        "signature": finding.signature,
        "detail": (minimal.bad if minimal else finding.result).detail,
        "states": finding.states,
        "tested": finding.tested,
        "minimal": None
        if minimal is None
        else {
            "path": f"{folder}/minimal.onnx",
            "nodes": len(minimal.model.graph.node),
            "op_types": [n.op_type for n in minimal.model.graph.node],
            "nodes_in_bodies": nodes_in_bodies(minimal.model.graph),
            "candidates": minimal.tried,
        },
        "minimal_note": item.minimal_note,
        "workarounds": [
            {
                "rewrite": s.rewrite,
                "model": s.model,
                "passes_everywhere": s.passes_everywhere,
                "new_failures": s.new_failures,
                "still_failing": s.still_failing,
            }
            for s in item.spellings
            if s.fixes
        ],
        "fragile": [
            {"rewrite": s.rewrite, "model": s.model, "breaks": s.breaks}
            for s in item.spellings
            if s.breaks
        ],
        "hidden": [{"rewrite": r, "release": v, "result": t} for r, v, t in item.hidden],
        "known": [{"reason": reason, "link": link} for reason, link in item.known],
        "behind": item.behind,
        "followed": item.followed,
        "report": f"{folder}/report.md",
    }


def write_triage(
    out: Path,
    model_path: Path,
    case: Case,
    first: Report,
    triaged: list[Triaged],
    flaky: Sequence[CheckResult] = (),
) -> list[str]:
    """Writes everything; returns one line per file or folder written."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():  # an earlier triage's findings: gone, not mixed with these
        if old.is_dir() and re.match(r"\d+-", old.name) and (old / "report.md").is_file():
            shutil.rmtree(old)
    written = []
    sections = []
    summaries = []
    for number, item in enumerate(triaged, 1):
        folder = folder_name(number, item)
        directory = out / folder
        directory.mkdir(parents=True, exist_ok=True)
        minimal = item.minimal
        if minimal is not None:
            onnx.save(minimal.model, str(directory / "minimal.onnx"))
            np.savez(directory / "minimal.npz", **minimal.feeds)  # type: ignore[arg-type]
            write_script(minimal.bad, minimal.bad_record, minimal.files, out, directory)
            if minimal.good_record is not None:
                good = minimal.good_record
                pins = [f"{k}=={v}" for k, v in sorted(good.packages.items())]
                (directory / "requirements-good.txt").write_text(
                    "".join(f"{line}\n" for line in [*python_note(good), *pins])
                )
        section = finding_markdown(item, model_path, number)
        title = re.sub(r"^## \d+\. ", "", section)
        (directory / "report.md").write_text(f"# {md_text(model_path.name)}: {title}")
        sections.append(section)
        summaries.append(_summary(item, folder))
        files = sorted(p.name for p in directory.iterdir())
        written.append(f"{directory}/: {', '.join(files)}")
    built = [c.id for c in first.cells if c not in first.broken_cells]
    head = [
        f"# Triage of {md_text(model_path.name)}",
        "",
        f"{plural(len(case.model.graph.node), 'node')}; checks {md_text(', '.join(case.checks))}; "
        f"cells {md_text(', '.join(built))}; host Python {platform.python_version()}.",
        "",
    ]
    for cell in first.broken_cells:
        head += [
            f"Not observed: {md_text(cell.id)} could not be built ({cell.state.value}: "
            f"{md_text(clip(cell.summary, 300))}).",
            "",
        ]
    head += [
        f"{plural(len(triaged), 'finding')}."
        if triaged
        else "No findings: every check behaves the same on every release observed.",
        "",
    ]
    if flaky:
        head += ["Nondeterministic (identical runs disagreed; not a finding):", ""]
        head += [f"- {md_text(f'{r.check} on {r.cell}: {r.detail[:300]}')}" for r in flaky]
        head += [""]
    allowed = [r for r in first.results if r.outcome.value == "pass" and WITHIN in r.detail]
    if allowed:  # levels that differ as little as the model's tolerance allows
        head += ["Within the model's tolerance (not findings):", ""]
        head += [f"- {md_text(f'{r.check} on {r.cell}: {clip(r.detail, 300)}')}" for r in allowed]
        head += [""]
    (out / "report.md").write_text("\n".join(head + sections))
    python = next((axis_python(c) for c in first.cells), "")  # `--python 3.12`'s
    document = {
        **({"python": python} if python else {}),
        "model": str(model_path),
        "findings": summaries,
        "nondeterministic": [{"check": r.check, "cell": r.cell, "detail": r.detail} for r in flaky],
    }
    (out / "triage.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return [*written, f"{out}/: report.md, triage.json"]
