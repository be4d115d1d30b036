"""What triage looks for in a model's matrix run: the checks whose outcome changes
between the releases of an axis, or that fail on all of them (findings), and what
"failing the same way" means (a result's signature).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from compat.cell.protocol import RawRecord
from compat.core.outcomes import CheckResult, Outcome
from compat.core.versions import version_key
from compat.plan.matrix import Cell, Plan

#: Outcomes that mean "the bug is there" and "it is not"; the rest (skip, flaky) are no
#: observation of either.
#: A timeout observes nothing either way: it says how busy the machine was, not which
#: release is right (a slow reference evaluator on an old onnx is no onnx "fix").
BAD = frozenset({Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.XFAIL})
GOOD = frozenset({Outcome.PASS, Outcome.XPASS})

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_PATH = re.compile(r"(?:[A-Za-z]:)?[\w.\-]*(?:/[\w.\-]+)+(?::\d+)?")
_LIST = re.compile(r"\[[^\[\]]*'…'[^\[\]]*\]")  # a list of names: as long as the graph is
_NUMBER = re.compile(r"\b0x[0-9a-fA-F]+\b|\d+(?:\.\d+)?(?:e[-+]?\d+)?")
#: where a result's detail was cut short (compat.cell.verdict.bounded)
_CUT = re.compile(r"\s*\[\.\.\. \d+ characters cut \.\.\.\].*$")
#: the longest message a signature keeps; a longer one is compared by its start
LONGEST = 300
#: how a signature that holds only the start of its message ends
PARTIAL = " …"


def state(outcome: Outcome | str) -> str | None:
    """ "bad", "good", or None (skipped, flaky, timed out: nothing observed either way)."""
    outcome = Outcome(outcome)
    return "bad" if outcome in BAD else "good" if outcome in GOOD else None


def signature(check: str, outcome: str, phase: str, detail: str) -> str:
    """The failure as a comparable line: check, outcome, phase, the error class and the
    message with names, paths and numbers blanked ('…', PATH, N) and lists of names
    made one ([…]). A message cut short (by its length here, or in the result) keeps
    its start and ends with PARTIAL; `same_way` compares such a one by its start."""
    text = detail.splitlines()[0] if detail else ""
    cut = bool(_CUT.search(text))
    if cut:
        text = _CUT.sub("", text)
        opened = text.rfind("[")
        if opened > text.rfind("]"):  # the cut fell inside a list: keep where it starts
            text = text[:opened] + "['…']"
    # onnx's inference lists every node's error; the first is the failure, the rest are
    # often its consequences downstream (a node whose input got no type)
    first, *others = text.split("(op_type:")
    text = first + ("(op_type:" + others[0] if others else "")
    text = _QUOTED.sub("'…'", text)
    text = _LIST.sub("[…]", text)
    text = _PATH.sub("PATH", text)
    text = _NUMBER.sub("N", text)
    text = " ".join(text.split())
    if cut or len(text) > LONGEST:
        text = text[:LONGEST] + PARTIAL
    where = f"{outcome}@{phase}" if phase else outcome
    return f"{check} {where}: {text}"


def head_signature(check: str, outcome: str, phase: str, head: str) -> str | None:
    """The signature of a detail's head, the text before a part its check may leave out
    (`ort_run`'s search for the optimizers responsible, checks_ort.UNSEARCHED): two
    details whose heads differ this way differ the same way whatever follows, since no
    message a check compares holds those sentences. None when blanking could reach
    past the head (a quote or a list it leaves open, a cut, onnx's node list)."""
    first = head.splitlines()[0] if head else ""
    blanked = _QUOTED.sub("", first)
    if "'" in blanked or '"' in blanked or blanked.rfind("[") > blanked.rfind("]"):
        return None
    if _CUT.search(first) or "(op_type:" in first:
        return None
    return signature(check, outcome, phase, first)


def same_way(one: str, other: str) -> bool:
    """Two signatures of the same failure: equal, or one the start of the other where
    that one holds only the start of its message."""
    if one == other:
        return True
    for short, long in ((one, other), (other, one)):
        if short.endswith(PARTIAL) and long.startswith(short.removesuffix(PARTIAL)):
            return True
    return False


def signature_of(result: CheckResult | RawRecord) -> str:
    if isinstance(result, CheckResult):
        return signature(result.check, result.outcome.value, result.phase, result.detail)
    return signature(result.get("check", ""), result["outcome"], result["phase"], result["detail"])


@dataclass
class Finding:
    """One check whose outcome changes between two neighbouring releases of an axis
    (kind "fixed": bad then good; "regression": good then bad) or that fails on every
    release of it ("always"). Bisection narrows the neighbours to the exact boundary."""

    check: str
    package: str  # the axis: "onnx" or "onnxruntime"
    kind: str  # "fixed" | "regression" | "always"
    bad_cell: Cell  # a failing cell: the matrix neighbour, then the bisected boundary
    good_cell: Cell | None  # the passing cell beside it (None: always)
    result: CheckResult  # the failing result it starts from
    states: dict[str, str] = field(default_factory=dict)  # release -> bad/good/- on the axis
    last_bad: str = ""
    first_good: str = ""
    last_good: str = ""
    first_bad: str = ""
    tested: dict[str, str] = field(default_factory=dict)  # bisection: release -> state

    @property
    def signature(self) -> str:
        return signature_of(self.result)

    def boundary(self) -> str:
        if self.kind == "fixed":
            return f"last bad {self.last_bad}, first good {self.first_good}"
        if self.kind == "regression":
            return f"last good {self.last_good}, first bad {self.first_bad}"
        tried = sorted({*self.states, *self.tested}, key=version_key)
        return f"no {self.package} release tried passes ({', '.join(tried)})"

    def observed(self) -> str:
        """What the matrix saw, before any bisection: the two neighbouring releases."""
        head = f"{self.check} · {self.package}"
        if self.kind == "fixed":
            return f"{head}: fails on {self.last_bad}, passes on {self.first_good}"
        if self.kind == "regression":
            return f"{head}: passes on {self.last_good}, fails on {self.first_bad}"
        return self.title()

    def title(self) -> str:
        if self.kind == "always":  # only the releases that observed the failure
            bad = [r for r, s in self.states.items() if s == "bad"]
            quiet = [r for r, s in self.states.items() if s != "bad"]
            span = bad[0] if len(bad) == 1 else f"{bad[0]}–{bad[-1]}"
            head = f"{self.check} · {self.package}: fails on every {self.package} release"
            if not quiet:
                return f"{head} ({span})"
            return f"{head} that ran it ({span}; nothing observed on {', '.join(quiet)})"
        if self.kind == "fixed":
            return f"{self.check} · {self.package}: fixed in {self.package} {self.first_good}"
        return f"{self.check} · {self.package}: broken in {self.package} {self.first_bad}"


def axis_cells(
    plan: Plan, package: str, results: Mapping[tuple[str, str], CheckResult], check: str
) -> list[Cell]:
    """The cells that show `package`'s releases to a check, in release order: its axis,
    or, when the plan has none (`--axis` of the other package, one cell), one cell per
    release of it among all cells, when every cell with that release agrees."""
    if package in plan.axes:
        return list(plan.axes[package])
    by_release: dict[str, list[Cell]] = {}
    for cell in plan.cells:
        by_release.setdefault(cell.version(package), []).append(cell)
    chosen = []
    for release in sorted(by_release, key=version_key):
        seen = {
            state(results[c.id, check].outcome)
            for c in by_release[release]
            if (c.id, check) in results
        }
        if len(seen) == 1:
            chosen.append(next(c for c in by_release[release] if (c.id, check) in results))
    return chosen


def findings_of(plan: Plan, results: list[CheckResult], checks: Mapping[str, str]) -> list[Finding]:
    """The findings of one case's results, per package in release order. `checks` maps
    each check to the package it exercises ("both": either package may show it)."""
    by_key = {(r.cell, r.check): r for r in results}
    found: list[Finding] = []
    for check, package in checks.items():
        axes = [a for a in ("onnx", "onnxruntime") if package in (a, "both")]
        if package == "both" and any(a in plan.axes for a in axes):
            axes = [a for a in axes if a in plan.axes]
        always_seen = False
        for axis in axes:
            cells = axis_cells(plan, axis, by_key, check)
            observed = [
                (cell, by_key[cell.id, check])
                for cell in cells
                if (cell.id, check) in by_key and state(by_key[cell.id, check].outcome)
            ]
            states = {
                c.version(axis): state(by_key[c.id, check].outcome) or "-"
                for c in cells
                if (c.id, check) in by_key
            }
            if not observed:
                continue
            kinds = [state(r.outcome) for _, r in observed]
            if all(k == "bad" for k in kinds):
                if not always_seen:  # one "always" per check, on its first axis
                    cell, result = observed[-1]
                    found.append(
                        Finding(
                            check,
                            axis,
                            "always",
                            cell,
                            None,
                            result,
                            states,
                            last_bad=cell.version(axis),
                        )
                    )
                    always_seen = True
                continue
            for (cell, result), (nxt, later) in itertools.pairwise(observed):
                was = state(result.outcome)
                now = state(later.outcome)
                if was == now:
                    continue
                if was == "bad":
                    finding = Finding(check, axis, "fixed", cell, nxt, result, states)
                    finding.last_bad = cell.version(axis)
                    finding.first_good = nxt.version(axis)
                else:
                    finding = Finding(check, axis, "regression", nxt, cell, later, states)
                    finding.last_good = cell.version(axis)
                    finding.first_bad = nxt.version(axis)
                found.append(finding)
    return found
