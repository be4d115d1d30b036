"""A known failure matches its own failure (compat/corpus/known.py): in its range, a
failure at the bug's phase, with its exception and its message, is `xfail`; any other
failure there stays unexpected and says which known bug it is not. Every corpus entry
declares what it looks like, a user's `[[tool.compat.known]]` may, and the committed
runs classify as they are stored."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from compat.cli.main import main
from compat.core.case import Case, KnownFailure
from compat.core.install import InstallRequest
from compat.core.outcomes import CheckResult, Outcome
from compat.core.report import Report, read_json
from compat.corpus.discover import discover_cases
from compat.corpus.known import classify, raised
from compat.plan.config import load_config
from compat.plan.matrix import Cell
from tests.conftest import ROOT
from tests.helpers import add_one_case

PADS = KnownFailure(
    "onnx",
    ">=1.18,<1.21",
    ("checker", "shape_inference"),
    "pads rejected",
    "https://x/1",
    phase=("check", "infer"),
    raises=("InferenceError",),
    match=r"'pads' input must be a 1D",
)
CASE = add_one_case(known=(PADS,))
IN_RANGE = Cell("1.18.0", "1.24.4", InstallRequest())
DOCUMENTED = "InferenceError: [ShapeInferenceError] (op_type:Pad): 'pads' input must be a 1D"


def failure(detail: str, phase: str = "infer", outcome: Outcome = Outcome.FAIL) -> CheckResult:
    return CheckResult("cell", CASE.id, "shape_inference", outcome, detail, phase)


def test_the_documented_failure_is_xfail_at_any_of_its_phases() -> None:
    for phase in ("check", "infer"):
        got = classify(failure(DOCUMENTED, phase), CASE, IN_RANGE)
        assert (got.outcome, got.known, got.detail) == (Outcome.XFAIL, "https://x/1", DOCUMENTED)


@pytest.mark.parametrize(
    ("detail", "phase", "why"),
    [
        (DOCUMENTED, "compare", "fails at compare, the bug at check or infer"),
        (
            "ValidationError: Unrecognized attribute: foo for operator Pad",
            "infer",
            "raises ValidationError, the bug InferenceError",
        ),
        (
            "InferenceError: [ShapeInferenceError] (op_type:Add): Incompatible dimensions",
            "infer",
            "its message does not match the bug's \"'pads' input must be a 1D\"",
        ),
    ],
)
def test_a_failure_in_range_that_looks_otherwise_is_unexpected_and_names_the_bug_it_is_not(
    detail: str, phase: str, why: str
) -> None:
    got = classify(failure(detail, phase), CASE, IN_RANGE)
    assert got.outcome is Outcome.FAIL and got.outcome.unexpected and got.known == ""
    assert got.detail == (
        f"not the known bug onnx >=1.18,<1.21 (pads rejected; https://x/1): {why} — {detail}"
    )
    outside = classify(failure(detail, phase), CASE, Cell("1.21.0", "1.24.4", InstallRequest()))
    assert outside.detail == detail  # no known bug there to name


def test_a_session_or_run_phase_covers_every_level() -> None:
    bug = KnownFailure("onnxruntime", "", ("ort_run",), "r", "https://x/2", phase=("session",))
    case = add_one_case(known=(bug,))
    for phase, expected in [
        ("session@all", Outcome.XFAIL),
        ("session@basic", Outcome.XFAIL),
        ("session", Outcome.XFAIL),
        ("run@all", Outcome.ERROR),
    ]:
        result = CheckResult("cell", case.id, "ort_run", Outcome.ERROR, "Fail: x", phase)
        assert classify(result, case, IN_RANGE).outcome is expected, phase


def test_of_two_bugs_in_one_range_the_one_the_failure_looks_like_labels_it() -> None:
    other = replace(PADS, link="https://x/3", raises=("ValidationError",), match="Unrecognized")
    case = add_one_case(known=(PADS, other))
    got = classify(failure("ValidationError: Unrecognized attribute: foo", "check"), case, IN_RANGE)
    assert (got.outcome, got.known) == (Outcome.XFAIL, "https://x/3")
    neither = classify(failure("KeyError: 'x'", "check"), case, IN_RANGE)
    assert neither.outcome is Outcome.FAIL
    assert neither.detail.startswith(
        "not the known bug onnx >=1.18,<1.21 (pads rejected; "
        "https://x/1): raises KeyError, the bug InferenceError; "
        "nor onnx >=1.18,<1.21 (pads rejected; https://x/3): "
        "raises KeyError, the bug ValidationError — "
    )


def test_a_symptom_the_bug_does_not_list_stays_unexpected_and_says_so() -> None:
    got = classify(failure("killed by signal 9", "", Outcome.CRASH), CASE, IN_RANGE)
    assert got.outcome is Outcome.CRASH
    assert got.detail == (
        "not the known bug onnx >=1.18,<1.21 (pads rejected; https://x/1): crashes; the bug "
        "shows fail, error — killed by signal 9"
    )
    skip = CheckResult("cell", CASE.id, "shape_inference", Outcome.SKIP, "opset 23 > max 21")
    assert classify(skip, CASE, IN_RANGE) == skip  # nothing failed: nothing to compare


def test_a_flaky_result_is_read_by_its_odd_run() -> None:
    flaky = CheckResult(
        "cell",
        "c",
        "ort_run",
        Outcome.FLAKY,
        "failed 1 of 4 runs, passed 3 of 4 runs: error@run@disabled: Fail: [ONNXRuntimeError] x",
        "run@disabled",
    )
    assert raised(flaky) == "Fail"
    assert raised(replace(flaky, detail="errored 1 of 2 runs: error: RuntimeError: y")) == (
        "RuntimeError"
    )
    compare = "disabled, basic: output 'y' differs at 1 of 2 elements"
    assert raised(failure(compare, "compare")) == ""  # levels are no exception
    bug = KnownFailure(
        "onnxruntime",
        "",
        ("ort_run",),
        "r",
        "l",
        ("fail", "flaky"),
        phase=("run",),
        raises=("Fail",),
    )
    case = add_one_case(known=(bug,))
    assert classify(flaky, case, IN_RANGE).outcome is Outcome.XFAIL
    assert classify(replace(flaky, outcome=Outcome.PASS), case, IN_RANGE).outcome is Outcome.XFAIL


def test_a_declared_look_is_tuples_of_names_never_a_bare_string() -> None:
    with pytest.raises(TypeError, match=r"KnownFailure.phase is a tuple of names, like \('run',\)"):
        KnownFailure("onnx", "", ("reference",), "r", "l", phase="run")  # type: ignore[arg-type]


# -- the corpus's own known failures --------------------------------------------------------


@cache
def corpus() -> dict[str, Case]:
    return {c.id: c for c in discover_cases(ROOT / "cases").cases}


def test_every_known_failure_of_the_corpus_declares_what_it_looks_like() -> None:
    """Each says its phase and a message pattern that compiles; its exception, where it
    names one, is a class name (an optimizer's or a comparison's fail raises nothing)."""
    known = {k for case in corpus().values() for k in case.known}
    assert len(known) > 30
    vague = [k.reason for k in known if not (k.phase and k.match)]
    assert vague == []
    for bug in known:
        re.compile(bug.match)
        assert all(re.fullmatch(r"[A-Z]\w*", name) for name in bug.raises), bug


def stored_raw(result: CheckResult) -> CheckResult:
    """A stored result as it came from its cell: a stored run keeps each result's phase
    and detail, but `xfail` replaced the raw outcome (a fail or an error: every bug of the
    corpus lists both; a flaky bug's pass has no phase) and `xpass` the pass's detail."""
    if result.outcome is Outcome.XFAIL:
        return replace(result, outcome=Outcome.FAIL if result.phase else Outcome.PASS, known="")
    if result.outcome is Outcome.XPASS:
        return replace(result, outcome=Outcome.PASS, known="")
    return result


def reclassified(report: Report) -> list[tuple[CheckResult, CheckResult]]:
    """Each corpus result of a stored run, and its raw result classified again now."""
    cells = {c.id: Cell(c.onnx, c.onnxruntime, InstallRequest()) for c in report.cells}
    return [
        (r, classify(stored_raw(r), corpus()[r.case], cells[r.cell]))
        for r in report.results
        if r.case in corpus()
    ]


@pytest.mark.parametrize("stored", ["matrix.json.gz", "pythons.json.gz", "writer_reader.json.gz"])
def test_the_committed_runs_classify_as_they_are_stored(stored: str) -> None:
    """Every documented failure of the committed runs is the one its bug declares: each
    stored result, classified again from its phase and detail, is what the run stored,
    with the same link (docs/matrix.json.gz: 1,139 xfail, on 27 cells)."""
    pairs = reclassified(read_json(ROOT / "docs" / stored))
    differ = [
        (r.cell, r.case, r.check, r.outcome.value, r.known, got.outcome.value, got.known)
        for r, got in pairs
        if (r.outcome, r.known) != (got.outcome, got.known)
    ]
    assert differ == []
    if stored == "matrix.json.gz":
        assert sum(r.outcome is Outcome.XFAIL for r, _ in pairs) == 1193


def test_each_split_entry_labels_its_own_failure_in_the_committed_run() -> None:
    """onnx's converter writes split=[] for a raw_data split before 1.22: the checker
    words it as a ValidationError on onnx 1.14.1 (no empty list attributes before onnx
    PR #5559) and as an InferenceError after; each is its own known failure."""
    cells = {c.id: c.onnx for c in read_json(ROOT / "docs" / "matrix.json.gz").cells}
    links = {
        (cells[r.cell], raised(r), got.known)
        for r, got in reclassified(read_json(ROOT / "docs" / "matrix.json.gz"))
        if r.case == "converter_split_squeeze.split13_to_12.raw_data" and got.known
    }
    assert ("1.14.1", "ValidationError", "https://github.com/onnx/onnx/pull/5559") in links
    assert {link for release, _, link in links if release != "1.14.1"} == {
        "https://github.com/onnx/onnx/pull/7910"
    }
    assert {name for release, name, _ in links if release != "1.14.1"} == {"InferenceError"}


# -- a user's own: [[tool.compat.known]] ----------------------------------------------------

AXES = """
[tool.compat.onnx]
versions = ["1.18.0"]
pair = "1.24.4"
[tool.compat.onnxruntime]
versions = ["1.24.4"]
pair = "1.23.2"
[[tool.compat.known]]
cases = "pad_pads_from_constant.*"
package = "onnx"
checks = ["checker"]
reason = "pads rejected"
"""


def test_a_user_s_known_failure_may_declare_phase_raises_and_match(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(
        AXES + "phase = 'check'\nraises = ['InferenceError', 'onnx.ValidationError']\n"
        "match = 'pads (input )?must be'\n"
    )
    (entry,) = load_config(config).known
    assert entry.failure.phase == ("check",)
    assert entry.failure.raises == ("InferenceError", "onnx.ValidationError")
    assert entry.failure.match == "pads (input )?must be"
    case = add_one_case(known=(entry.failure,))
    result = CheckResult("c", case.id, "checker", Outcome.FAIL, "ValidationError: pads must be")
    assert classify(replace(result, phase="check"), case, IN_RANGE).outcome is Outcome.XFAIL
    config.write_text(AXES)
    assert load_config(config).known[0].failure.match == ""  # each is optional


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "phase = 3",
            "phase = 3: expected a check's phase or a list of them ('session' or 'run' alone: "
            'at any optimization level), like phase = ["check", "infer"]',
        ),
        ("phase = []", "phase = []: expected a check's phase"),
        ("phase = ['run at all']", "phase = ['run at all']: expected a check's phase"),
        ("raises = 'not a name'", "raises = 'not a name': expected an exception type's name"),
        ("raises = [3]", "raises = [3]: expected an exception type's name or a list of them"),
        ("match = ''", "match = '': expected a regular expression searched in the failure"),
        ("match = ['x']", "match = ['x']: expected a regular expression"),
        (
            "match = 'splits (0'",
            "match = 'splits (0': not a regular expression (missing ), unterminated subpattern "
            "at position 7); escape what is meant literally, like match = 'splits \\(0\\)'",
        ),
    ],
)
def test_a_bad_look_is_one_line_naming_the_file_the_key_the_value_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, said: str
) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(f"{AXES}{line}\n")
    assert main(["matrix", "--list", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{config}: [tool.compat.known #1] {said}" in err


# -- a real run -----------------------------------------------------------------------------

CHANGED = '''"""Pad with pads from Constant(value_ints), as the corpus has it, and changed."""

from dataclasses import replace

from onnx import helper

from cases.pad_pads_from_constant import cases as original


def cases():
    (documented,) = [c for c in original() if c.id.endswith(".value_ints")]
    model = type(documented.model)()
    model.CopyFrom(documented.model)
    pad = next(n for n in model.graph.node if n.op_type == "Pad")
    pad.attribute.append(helper.make_attribute("foo", 1))  # an attribute Pad has not
    return [
        replace(documented, id="changed_pads.documented"),
        replace(documented, id="changed_pads.otherwise", model=model),
    ]
'''


@pytest.mark.envs
def test_a_corpus_case_changed_to_fail_otherwise_in_its_known_range_is_unexpected(
    tmp_path: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pad_pads_from_constant.value_ints on onnx 1.18.0, and the same case with an
    attribute Pad does not have: the checker now rejects the attribute (ValidationError)
    before the pads, and that is not onnxscript #3201; strict shape inference, which
    ignores attributes, still fails on the pads, as documented."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "changed_pads.py").write_text(CHANGED)
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--corpus",
            str(corpus),
            "--state-dir",
            str(shared_state),
            "--out",
            str(tmp_path / "out"),
            "--onnx",
            "1.18.0",
            "--ort",
            "1.24.4",
            "--cross",
            "--reruns",
            "0",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    results = json.loads((tmp_path / "out" / "matrix.json").read_text())["results"]
    got = {(r["case"], r["check"]): r for r in results}
    link = "https://github.com/microsoft/onnxscript/pull/3201"
    for check in ("checker", "shape_inference"):
        documented = got["changed_pads.documented", check]
        assert (documented["outcome"], documented["known"]) == ("xfail", link)
    assert got["changed_pads.otherwise", "shape_inference"]["outcome"] == "xfail"
    otherwise = got["changed_pads.otherwise", "checker"]
    assert (otherwise["outcome"], otherwise["phase"], otherwise["known"]) == ("fail", "check", "")
    assert otherwise["detail"].startswith(
        "not the known bug onnx <1.21 (strict shape inference rejects pads from "
        f"Constant(value_ints); {link}): raises ValidationError, the bug InferenceError — "
        "ValidationError: Unrecognized attribute: foo for operator Pad"
    )
    assert "changed_pads.otherwise · checker: fail@check: not the known bug onnx <1.21" in out


def test_triage_names_a_known_bug_only_when_the_failure_looks_like_it() -> None:
    """Triage's "known bugs like this one" (workaround.known_like): a declared bug of the
    same package, check and range is named for a failure that raises what it declares,
    and not for one that raises something else: that one is not this bug."""
    from compat.followup.triage.findings import Finding
    from compat.followup.triage.workaround import known_like

    link = "https://example.org/1"
    bug = KnownFailure(
        "onnx", "<1.21", ("checker",), "the pads bug", link, raises=("ValidationError",)
    )
    bad, good = (
        Cell(v, "1.24.4", InstallRequest((f"onnx=={v}", "onnxruntime==1.24.4")))
        for v in ("1.20.1", "1.21.0")
    )

    def finding(detail: str) -> Finding:
        result = CheckResult(bad.id, "mine.model", "checker", Outcome.FAIL, detail, phase="check")
        return Finding("checker", "onnx", "fixed", bad, good, result)

    looks = finding("ValidationError: Field 'pads' of 'Pad' is invalid")
    assert known_like(looks, None, [], [bug]) == [("the pads bug", link)]
    other = finding("InferenceError: [ShapeInferenceError] rank mismatch")
    assert known_like(other, None, [], [bug]) == []
