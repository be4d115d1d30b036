"""Triage's output folder: report.md (every finding, ready to paste upstream), one
folder per finding with its own report.md, minimal.onnx + minimal.npz, repro.py with
requirements.txt (the failing release) and requirements-good.txt (the passing one),
and triage.json, the same facts for programs."""

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
import onnx.printer

from compat import resources
from compat.cell.checks import BY_NAME
from compat.core.versions import version_key
from compat.followup.cut import nodes_in_bodies
from compat.followup.repro import write_script
from compat.followup.triage.common import clip, plural
from compat.render.text import md_address, md_code, md_fence, md_text

if TYPE_CHECKING:
    from compat.core.case import Case
    from compat.core.outcomes import CheckResult
    from compat.core.report import Report
    from compat.followup.triage.command import Triaged

#: plain-Python versions of the checks, for the report: a maintainer runs these as is
SNIPPETS = resources.TRIAGE_SNIPPETS
#: arrays with at most this many elements are printed in full
SMALL = 24
#: the longest model text a report prints (a minimal model with big subgraph bodies)
TEXT_LIMIT = 12000


def model_text(model: onnx.ModelProto) -> str:
    """onnx's text syntax of the model, initializers of more than SMALL elements shown
    as inputs (their values are in minimal.onnx), cut at TEXT_LIMIT characters."""
    shown = onnx.ModelProto()
    shown.CopyFrom(model)
    large = [t for t in shown.graph.initializer if np.prod(t.dims) > SMALL]
    for tensor in large:
        shown.graph.initializer.remove(tensor)
        shown.graph.input.append(
            onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, list(tensor.dims))
        )
    text = onnx.printer.to_text(shown).strip()
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT] + f"\n... ({len(text) - TEXT_LIMIT} more characters: minimal.onnx)"
    if large:
        text += f"\n# {len(large)} initializer(s) shown as inputs: their values are in minimal.onnx"
    return text


def folder_name(number: int, item: Triaged) -> str:
    return f"{number}-{item.finding.check}-{item.finding.package}"


def _array(name: str, value: np.ndarray) -> str:
    text = f"{md_code(name)}: {value.dtype} {list(value.shape)}"
    if value.size <= SMALL:
        text += " = " + md_code(np.array2string(value, separator=", ").replace("\n", " "))
    return text


def _by_release(releases: dict[str, str]) -> list[str]:
    return sorted(releases, key=version_key)


def _packages(record: Any) -> str:
    return md_text(", ".join(f"{k} {v}" for k, v in sorted(record.packages.items())))


def _workarounds(item: Triaged) -> list[str]:
    lines = []
    if not any(s.model == "original" and s.fixes for s in item.spellings):
        lines.append(
            "- original model: no rewrite in the catalogue makes the failing releases pass"
        )
    for rewrite, release, summary in item.hidden:
        follow = (
            f"triaged as finding {', '.join(map(str, item.followed))}, on that spelling"
            if item.followed
            else f"triage that spelling (`python -m compat variants MODEL.onnx --rewrites "
            f"{rewrite}`, then `nox -s triage` on it)"
        )
        lines.append(f"- the original spelled `{rewrite}` no longer fails this way, but on "
                     f"{item.finding.package} {md_text(release)} it fails another way: "
                     f"{md_text(clip(summary, 300))}. A second failure hides behind this one: "
                     f"{follow}")  # fmt: skip
    for model in ("original", "minimal"):
        fixes = [s for s in item.spellings if s.model == model and s.fixes]
        for s in fixes:
            extra = ""
            if s.new_failures:
                extra = f"; but it newly fails {md_text(', '.join(s.new_failures[:5]))}"
            elif model == "original" and s.still_failing:
                still = md_text(", ".join(s.still_failing[:5]))
                extra = (f"; it adds no failure, and {still} still fail as they do on the model "
                         "as written")  # fmt: skip
            elif model == "original":
                extra = "; every other check holds on every cell"
            lines.append(
                f"- {model} model, `{s.rewrite}` ({s.description}): the failing "
                f"releases pass and no passing release fails{extra}"
            )
    return lines


def _fragile(item: Triaged) -> list[str]:
    return [
        f"- {s.model} model, `{s.rewrite}` ({s.description}): fails on "
        f"{item.finding.package} {md_text(', '.join(s.breaks))}, which pass the model as written"
        for s in item.spellings
        if s.breaks
    ]


def finding_markdown(item: Triaged, model_path: Path, number: int) -> str:
    finding, minimal = item.finding, item.minimal
    check = finding.check
    what = BY_NAME[check].what if check in BY_NAME else md_text(check)
    ops = ", ".join(n.op_type for n in minimal.model.graph.node) if minimal else ""
    lines = [f"## {number}. {md_text(finding.title())}"
             + (f" ({md_text(clip(ops, 60))})" if ops else ""), ""]  # fmt: skip
    if finding.kind == "always":
        lines += [f"No release tried passes: this may be a defect of the model itself (a "
                  f"declaration, a type, an attribute) rather than of {finding.package}; "
                  "the message below says what is refused.", ""]  # fmt: skip
    if item.behind:
        lines += [f"This failure shows {md_text(item.behind)}; the minimal model below comes from "
                  "that spelling.", ""]  # fmt: skip
    boundary = md_text(finding.boundary())
    tested = ", ".join(f"{v} {finding.tested[v]}" for v in _by_release(finding.tested))
    lines += [
        f"{md_code(model_path.name)}: {what}. Outcome on the failing release: "
        + md_text(clip((minimal.bad if minimal else finding.result).summary, 600)),
        "",
        f"**Since when:** {boundary}."
        + (f" Releases tested beyond the run: {md_text(tested)}." if finding.tested else ""),
        "",
        f"Releases of {finding.package} in the run: "
        + md_text(", ".join(f"{v} {s}" for v, s in finding.states.items()))
        + ".",
        "",
    ]
    if minimal is None:
        lines += [f"**Minimal model:** none ({md_text(item.minimal_note)}).", ""]
    else:
        ops = md_text(", ".join(n.op_type for n in minimal.model.graph.node))
        lines += ["### Environment", ""]
        lines += [
            f"- failing: {_packages(minimal.bad_record)}; Python "
            + md_text(f"{minimal.bad_record.python}; {minimal.bad_record.platform}")
        ]
        if minimal.good_record is not None:
            lines += [f"- passing: {_packages(minimal.good_record)}"]
        lines += [
            "",
            f"### Minimal model ({len(minimal.model.graph.node)} of "
            f"{plural(item.original_nodes, 'node')}: {ops}"
            + (
                f"; {inner} more in subgraph bodies"
                if (inner := nodes_in_bodies(minimal.model.graph))
                else ""
            )
            + ")",
            "",
        ]
        lines += [md_fence(model_text(minimal.model)), ""]
        if minimal.note:
            lines += [f"Not smaller: {md_text(minimal.note)}.", ""]
        lines += ["Inputs (`minimal.npz`):", ""]
        lines += [f"- {_array(k, np.asarray(v))}" for k, v in minimal.feeds.items()]
        lines += ["", "### Expected vs actual", ""]
        package = finding.package
        if minimal.good is not None and finding.good_cell is not None:
            good = md_text(f"{package} {finding.good_cell.version(package)}")
            lines += [f"- expected ({good}): {md_text(clip(minimal.good.summary, 600))}"]
        else:
            lines += [f"- expected: a pass ({what}); no release tried passes"]
        bad = md_text(f"{package} {finding.bad_cell.version(package)}")
        lines += [f"- actual ({bad}): {md_text(clip(minimal.bad.summary, 600))}", ""]
        lines += ["### Reproduce", ""]
        snippet = SNIPPETS / f"{check}.py"
        if snippet.is_file():
            lines += ["```python", snippet.read_text().strip(), "```", ""]
        good_too = (
            "; with requirements-good.txt instead, exit 0 on the passing release"
            if minimal.good_record is not None
            else ""
        )
        lines += [
            f"The exact check, self-contained (exit 1 on the failing release{good_too}):",
            "",
            "```",
            "python -m venv venv && venv/bin/pip install --only-binary :all: -r requirements.txt",
            "venv/bin/python repro.py",
            "```",
            "",
        ]
    if item.known:
        lines += ["Known bugs the onnx-compat corpus records that look like this one (same "
                  "package, check, release range and operators):", ""]  # fmt: skip
        lines += [f"- {md_text(reason)}: {md_address(link)}" for reason, link in item.known]
        lines += [""]
    lines += ["### Workaround", "", *_workarounds(item), ""]
    fragile = _fragile(item)
    if fragile:
        lines += ["Fragile spellings (a passing release fails under them):", "", *fragile, ""]
    return "\n".join(lines)


def _summary(item: Triaged, folder: str) -> dict[str, Any]:
    finding, minimal = item.finding, item.minimal
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
                pins = sorted(minimal.good_record.packages.items())
                (directory / "requirements-good.txt").write_text(
                    "".join(f"{k}=={v}\n" for k, v in pins)
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
        head += [f"Not observed: {md_text(cell.id)} could not be built ({cell.state.value}: "
                 f"{md_text(clip(cell.summary, 300))}).", ""]  # fmt: skip
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
    (out / "report.md").write_text("\n".join(head + sections))
    document = {
        "model": str(model_path),
        "findings": summaries,
        "nondeterministic": [{"check": r.check, "cell": r.cell, "detail": r.detail} for r in flaky],
    }
    (out / "triage.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return [*written, f"{out}/: report.md, triage.json"]
