"""One finding's section of triage's report.md, ready to paste upstream (each finding's
folder holds it as its own report.md): what fails since when, the environments, the
minimal model as onnx's text and its inputs, expected vs actual, how to reproduce it,
known bugs like it, and the workarounds. Apart from compat/followup/triage/report.py,
which writes the folder, because this is what a maintainer reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
import onnx.printer

from compat import resources
from compat.cell.blame import responsible_in
from compat.cell.checks import BY_NAME
from compat.core.printed import axis_python
from compat.core.versions import version_key
from compat.followup.cut import nodes_in_bodies
from compat.followup.repro import with_python
from compat.followup.triage.common import clip, plural
from compat.render.text import md_address, md_code, md_fence, md_text

if TYPE_CHECKING:
    from compat.followup.triage.findings import Finding
    from compat.followup.triage.minimal import Minimal
    from compat.followup.triage.triaged import Triaged

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
        lines.append(
            f"- the original spelled `{rewrite}` no longer fails this way, but on "
            f"{item.finding.package} {md_text(release)} it fails another way: "
            f"{md_text(clip(summary, 300))}. A second failure hides behind this one: "
            f"{follow}"
        )
    for model in ("original", "minimal"):
        fixes = [s for s in item.spellings if s.model == model and s.fixes]
        for s in fixes:
            extra = ""
            if s.new_failures:
                extra = f"; but it newly fails {md_text(', '.join(s.new_failures[:5]))}"
            elif model == "original" and s.still_failing:
                still = md_text(", ".join(s.still_failing[:5]))
                extra = (
                    f"; it adds no failure, and {still} still fail as they do on the model "
                    "as written"
                )
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
    """One finding's section of report.md, and its folder's own report.md: what fails
    since when, the minimal model, how to reproduce it, known bugs like it, workarounds."""
    finding = item.finding
    minimal = item.minimal
    check = finding.check
    what = BY_NAME[check].what if check in BY_NAME else md_text(check)
    lines = [*_heading(item, number), *_outcome(item, model_path, what)]
    if minimal is None:
        lines += [f"**Minimal model:** none ({md_text(item.minimal_note)}).", ""]
    else:
        lines += _minimal(item, minimal)
        lines += _expected(finding, minimal, what)
        lines += _reproduce(check, minimal)
    if item.known:
        lines += [
            "Known bugs the onnx-compat corpus records that look like this one (same "
            "package, check, release range and operators):",
            "",
        ]
        lines += [f"- {md_text(reason)}: {md_address(link)}" for reason, link in item.known]
        lines += [""]
    lines += ["### Workaround", "", *_workarounds(item), ""]
    fragile = _fragile(item)
    if fragile:
        lines += ["Fragile spellings (a passing release fails under them):", "", *fragile, ""]
    return "\n".join(lines)


def _heading(item: Triaged, number: int) -> list[str]:
    """The title (the minimal model's operators in it), and what kind of finding it is."""
    finding = item.finding
    minimal = item.minimal
    ops = ", ".join(n.op_type for n in minimal.model.graph.node) if minimal else ""
    lines = [
        f"## {number}. {md_text(finding.title())}"
        + (f" ({md_text(clip(ops, 60))})" if ops else ""),
        "",
    ]
    optimizer = _optimizer(finding)
    lines += optimizer
    if finding.kind == "always" and not optimizer:
        lines += [
            f"No release tried passes: this may be a defect of the model itself (a "
            f"declaration, a type, an attribute) rather than of {finding.package}; "
            "the message below says what is refused.",
            "",
        ]
    if item.behind:
        lines += [
            f"This failure shows {md_text(item.behind)}; the minimal model below comes from "
            "that spelling.",
            "",
        ]
    return lines


def _optimizer(finding: Finding) -> list[str]:
    """What an optimization-level disagreement is before it is called a defect: the
    onnxruntime optimizer responsible, an intended rewrite or a bug in it."""
    names = responsible_in(finding.result.detail) if finding.check == "ort_run" else []
    if not names:
        return []
    named = ", ".join(md_code(n) for n in names)
    text = (
        f"**Optimizer:** onnxruntime's {named} makes an optimization level compute other "
        "outputs: disabling it alone (`InferenceSession(..., disabled_optimizers=[...])`) "
        "makes them agree with level `disabled`. Its largest differences are below, beside "
        "the tolerance they exceed. A rewrite that only rounds differently (a fused or "
        "reordered computation) is intended: if the difference is noise for this model, "
        "allow it with `rtol`/`atol` in the model folder's `compat.toml` rather than report "
        "it. Outputs that are wrong, not rounded, are a bug of that optimizer."
    )
    return [text, ""]


def _outcome(item: Triaged, model_path: Path, what: str) -> list[str]:
    """The outcome on the failing release, since when it fails, and every release's state."""
    finding = item.finding
    minimal = item.minimal
    boundary = md_text(finding.boundary())
    tested = ", ".join(f"{v} {finding.tested[v]}" for v in _by_release(finding.tested))
    return [
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


def _minimal(item: Triaged, minimal: Minimal) -> list[str]:
    """The environments it was reduced in, the minimal model as text, and its inputs."""
    ops = md_text(", ".join(n.op_type for n in minimal.model.graph.node))
    lines = ["### Environment", ""]
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
    return lines


def _expected(finding: Finding, minimal: Minimal, what: str) -> list[str]:
    """The minimal model's result on the passing release (when one passes) and the failing one."""
    lines = ["", "### Expected vs actual", ""]
    package = finding.package
    if minimal.good is not None and finding.good_cell is not None:
        good = md_text(f"{package} {finding.good_cell.version(package)}")
        lines += [f"- expected ({good}): {md_text(clip(minimal.good.summary, 600))}"]
    else:
        lines += [f"- expected: a pass ({what}); no release tried passes"]
    bad = md_text(f"{package} {finding.bad_cell.version(package)}")
    return [*lines, f"- actual ({bad}): {md_text(clip(minimal.bad.summary, 600))}", ""]


def _reproduce(check: str, minimal: Minimal) -> list[str]:
    """The check as plain Python, and the commands that run repro.py."""
    lines = ["### Reproduce", ""]
    snippet = SNIPPETS / f"{check}.py"
    if snippet.is_file():
        lines += ["```python", snippet.read_text().strip(), "```", ""]
    good_too = (
        "; with requirements-good.txt instead, exit 0 on the passing release"
        if minimal.good_record is not None
        else ""
    )
    return [
        *lines,
        f"The exact check, self-contained (exit 1 on the failing release{good_too}):",
        "",
        "```",
        with_python("python -m venv venv", axis_python(minimal.bad_record))
        + " && venv/bin/pip install --only-binary :all: -r requirements.txt",
        "venv/bin/python repro.py",
        "```",
        "",
    ]
