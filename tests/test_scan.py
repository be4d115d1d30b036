"""`compat.scan` and `onnx-compat scan` / `knowledge` (compat/corpus/scan.py,
compat/corpus/knowledge.py, compat/cli/commands/scan.py, compat/followup/verify.py).

The scan's claims are measured against runs, never asserted by hand: its predictions on
every case of the corpus against the stored real run (docs/matrix.json.gz), and on the
respellings `--mutate` makes against a run of them.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

import compat
from compat.cli.main import main
from compat.core.case import Case
from compat.core.errors import ConfigError
from compat.core.install import InstallRequest
from compat.core.outcomes import CellRecord, CheckResult, Outcome
from compat.core.report import Report, read_json
from compat.core.versions import holds, in_range, intersect
from compat.corpus.discover import discover_cases
from compat.corpus.findings import Finding
from compat.corpus.knowledge import detectors, families
from compat.corpus.make import randn
from compat.corpus.rewrites import CATALOGUE, mutated
from compat.corpus.scan import scan, scan_model
from tests.conftest import ROOT
from tests.helpers import UNSEEN_BY_MODELS, buried

PAD = "pad_pads_from_constant.value_ints"
FAILED = {Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.XFAIL}
PASSED = {Outcome.PASS, Outcome.XPASS}


@cache
def corpus() -> dict[str, Case]:
    return {c.id: c for c in discover_cases(ROOT / "cases").cases}


@cache
def stored() -> Report:
    return read_json(ROOT / "docs" / "matrix.json.gz")


def detected_families() -> set[str]:
    return {f.name for f in families() if f.detectors}


def predicting(findings: Iterable[Finding], cell: CellRecord, check: str) -> list[Finding]:
    """The findings whose bug covers `check` in `cell` (by the bug's own range, where the
    cell has what the bug also requires)."""
    return [
        f
        for f in findings
        if check in f.checks
        and in_range(getattr(cell, f.package), f.known)
        and holds(f.requires, cell.installed)
    ]


def judged(
    report: Report, models: dict[str, onnx.ModelProto]
) -> dict[str, list[tuple[CheckResult, list[Finding]]]]:
    """Each result of `report` whose outcome says pass or fail, with the findings that
    predict a failure there, by verdict: `hit`, `missed`, `false_alarm`, `quiet`."""
    cells = {c.id: c for c in report.cells}
    found = {case: bugs(scan(model, None, None)) for case, model in models.items()}
    verdicts: dict[str, list[tuple[CheckResult, list[Finding]]]] = defaultdict(list)
    for result in report.results:
        if result.case not in found or result.outcome not in FAILED | PASSED:
            continue
        by = predicting(found[result.case], cells[result.cell], result.check)
        failed = result.outcome in FAILED
        verdict = ("hit" if by else "missed") if failed else ("false_alarm" if by else "quiet")
        verdicts[verdict].append((result, by))
    return verdicts


def bugs(findings: Iterable[Finding]) -> list[Finding]:
    """The detectors' findings: known bugs, not the releases too old to load the model
    (whose own measure is (e) below)."""
    return [f for f in findings if f.kind == "bug"]


def shown(items: list[tuple[CheckResult, list[Finding]]]) -> list[str]:
    return [
        f"{r.case} · {r.check} · {r.cell}: {r.outcome.value} {[f.detector for f in by]}"
        for r, by in items
    ]


# -- (a) precision and recall on the corpus, against the stored real run ----------------


def test_every_family_with_known_failures_declares_detectors() -> None:
    """The families whose rare forms the stored run shows failing (24) all have DETECTORS."""
    failing = {r.case.split(".", 1)[0] for r in stored().results if r.outcome is Outcome.XFAIL}
    assert len(failing) == 24
    assert sorted(failing - detected_families()) == []


def test_precision_and_recall_are_100_percent_on_the_stored_run() -> None:
    """Every xfail of the stored run is predicted, by a finding with the result's link; no
    prediction lands where the stored run passes (every detector run on every case)."""
    models = {c.id: c.model for c in corpus().values()}  # every detector on every case
    verdicts = judged(stored(), models)
    missed = verdicts["missed"]
    verdicts["missed"] = [(r, by) for r, by in missed if r.known not in UNSEEN_BY_MODELS]
    wrong_link = [
        (r, by)
        for r, by in verdicts["hit"]
        if r.outcome is Outcome.XFAIL and r.known not in {f.link for f in by}
    ]
    assert shown(verdicts["missed"]) == []  # recall
    assert shown(verdicts["false_alarm"]) == []  # precision
    assert shown(wrong_link) == []
    xfails = [r for r in stored().results if r.outcome is Outcome.XFAIL]
    assert len(verdicts["hit"]) == sum(r.known not in UNSEEN_BY_MODELS for r in xfails)


@pytest.mark.parametrize("case_id", sorted(corpus()))
def test_a_case_s_predicted_links_are_those_of_its_xfails(case_id: str) -> None:
    """With no target range: the links the scan names for a case are exactly the links of
    its xfail results in the stored run; a twin (no known failure) gets no finding."""
    case = corpus()[case_id]
    results = stored().results
    xfails = {r.known for r in results if r.case == case_id and r.outcome is Outcome.XFAIL}
    xfails -= set(UNSEEN_BY_MODELS)
    found = bugs(scan(case.model, None, None))
    cells = stored().cells
    seen = {
        f.link
        for f in found
        if any(
            set(f.checks) & set(case.checks) and in_range(getattr(c, f.package), f.known)
            for c in cells
        )
    }
    assert seen == xfails
    if not case.known:  # a finding about a check the twin does not run is no claim on it
        assert [f.detector for f in found if set(f.checks) & set(case.checks)] == []


# -- (b) the respellings --mutate makes -------------------------------------------------


def respellings() -> list[Case]:
    return [v for c in corpus().values() for v in mutated(c, CATALOGUE)]


#: A respelling that raises the opset spells another family's construct too: Q/DQ at
#: opset 19, whose kernels onnxruntime 1.15 lacks (qdq_reference_opset).
RAISES_THE_OPSET = {("opset_up", "qdq_reference_opset.opset19_kernels")}


def test_a_twin_s_respelling_is_predicted_only_where_it_introduces_the_construct() -> None:
    """A twin's respelling gets a finding only when the rewrite spells the construct the
    family's rare form has (the running test below confirms each); then it is that
    family's own detector."""
    introduced = {}
    for variant in respellings():
        original = corpus()[variant.id.split("~")[0]]
        if original.known:
            continue
        found = [
            f for f in bugs(scan(variant.model, None, None)) if set(f.checks) & set(variant.checks)
        ]
        if found:
            introduced[variant.id] = sorted(f.detector for f in found)
    for variant, found in introduced.items():
        rewrite = variant.split("~")[1]
        own = [d for d in found if (rewrite, d) not in RAISES_THE_OPSET]
        assert all(d.split(".")[0] == variant.split(".")[0] for d in own), (variant, found)
    rewrites = {v.split("~")[1] for v in introduced}
    expected = {"optional_input_explicit_empty", "constant_value_attributes", "opset_down"}
    assert rewrites <= expected | {rewrite for rewrite, _ in RAISES_THE_OPSET}
    assert "pad_pads_from_constant.tensor~constant_value_attributes" in introduced


#: what the run of the respellings shows failing that no known bug of the corpus explains
#: (each one a new finding for the corpus, not a detector's miss)
UNKNOWN_TO_THE_CORPUS = {("split_empty_split.opset13.omitted~node_outlined", "version_converter")}


@pytest.mark.envs
def test_predictions_on_the_respellings_agree_with_a_run_of_them(
    tmp_path: Path, shared_state: Path
) -> None:
    """`matrix --mutate` on four families, on releases either side of known boundaries
    (onnx 1.21: pads from value_ints; onnxruntime 1.32: Split-18 with split ""): every
    prediction of a failure is observed failing, and every known bug a respelling still
    runs into (xfail) is predicted."""
    families_run = (
        "pad_pads_from_constant",
        "squeeze_empty_axes",
        "split_empty_split",
        "conv_bias_fusion",
    )
    out = tmp_path / "out"
    code = main(
        [
            "matrix",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--state-dir",
            str(shared_state),
            "--mutate",
            "--cases",
            ",".join(f"{f}.*" for f in families_run),
            "--onnx",
            "1.20.1,1.21.0",
            "--ort",
            "1.31.1,1.32.0",
            "--out",
            str(out),
            "--jobs",
            "2",
        ]
    )
    assert code in (0, 1)
    report = read_json(out / "matrix.json")
    models = {c.id: c.model for c in corpus().values() if c.family in families_run}
    models |= {v.id: v.model for v in respellings() if v.family in families_run}
    assert {r.case for r in report.results} == set(models)
    verdicts = judged(report, models)
    assert shown(verdicts["false_alarm"]) == []
    missed_known = [(r, by) for r, by in verdicts["missed"] if r.outcome is Outcome.XFAIL]
    assert shown(missed_known) == []
    unexplained = {(r.case, r.check) for r, _ in verdicts["missed"]} - {
        (r.case, r.check) for r, _ in missed_known
    }
    assert unexplained == UNKNOWN_TO_THE_CORPUS
    # the twins' respellings that introduce a construct: predicted, and observed failing
    twins_hit = {r.case for r, _ in verdicts["hit"] if not corpus()[r.case.split("~")[0]].known}
    assert "pad_pads_from_constant.tensor~constant_value_attributes" in twins_hit
    assert "squeeze_empty_axes.omitted~optional_input_explicit_empty" in twins_hit


# -- the library call --------------------------------------------------------------------


def pads_model(unrelated: int = 180) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """221 nodes, pads from Constant(value_ints) buried in the middle."""
    core = [
        helper.make_node("Constant", [], ["pads"], value_ints=[0, 1, 1, 0, 1, 1]),
        helper.make_node("Pad", ["p", "pads"], ["padded"]),
    ]
    return buried(core, {"p": randn(1, 1, 2, 3)}, "padded", unrelated=unrelated)


@pytest.fixture
def pads_file(tmp_path: Path) -> Path:
    model, feeds = pads_model()
    path = tmp_path / "buried.onnx"
    onnx.save(model, path)
    np.savez(tmp_path / "buried.npz", **feeds)
    return path


def test_scan_names_the_construct_where_it_is_and_the_releases_of_the_target() -> None:
    model, _ = pads_model()
    assert len(model.graph.node) == 221
    (finding,) = compat.scan(model, onnx=">=1.18", config=ROOT / "pyproject.toml")
    assert finding.detector == PAD
    assert finding.where == ("graph/node 'padded'",)
    assert (finding.package, finding.known, finding.affected) == ("onnx", "<1.21", ">=1.18,<1.21")
    assert finding.releases == ("1.18.0", "1.19.1", "1.20.1")  # the config's axis, no index
    assert finding.checks == ("checker", "shape_inference")
    assert finding.rewrite == "constant_value_tensor"
    assert Finding.from_dict(json.loads(json.dumps(finding.to_dict()))) == finding
    assert compat.scan(model, onnx=">=1.21") == []  # the exporter's assertion


def test_a_detection_outside_the_target_is_no_finding_but_is_said() -> None:
    model, _ = pads_model(30)
    result = scan_model(model, onnx=">=1.21")
    assert result.findings == ()
    assert [f.detector for f in result.outside] == [PAD]


def test_operators_no_corpus_model_exercises_are_uncovered() -> None:
    model, _ = pads_model(30)
    custom = helper.make_node("FusedGemm", ["y", "y"], ["z"], domain="com.microsoft")
    model.graph.node.append(custom)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    uncovered = {str(u) for u in scan_model(model).uncovered}
    assert "com.microsoft.FusedGemm" in uncovered
    assert not {"Pad", "Constant", "Add", "Relu"} & uncovered  # the corpus has those


@pytest.mark.parametrize(
    ("first", "second", "both"),
    [
        ("<1.21", ">=1.18", ">=1.18,<1.21"),
        ("<1.21", ">=1.21", None),
        ("", "", ""),
        (">=1.14,<1.18", ">1.17", ">1.17,<1.18"),
        ("==1.18.0", "<1.18", None),
        ("<=1.20", ">=1.20", ">=1.20,<=1.20"),
        ("~=1.4.5", ">=1.4", ">=1.4.5,<1.5"),
    ],
)
def test_ranges_intersect_by_their_bounds(first: str, second: str, both: str | None) -> None:
    assert intersect(first, second) == both


def test_a_detector_naming_a_rewrite_the_catalogue_lacks_is_refused(tmp_path: Path) -> None:
    source = (ROOT / "cases" / "pad_pads_from_constant.py").read_text()
    (tmp_path / "pad_pads_from_constant.py").write_text(
        source.replace('rewrite="constant_value_tensor"', 'rewrite="no_such_rewrite"')
    )
    with pytest.raises(ConfigError, match="no_such_rewrite"):
        detectors(tmp_path)


# -- (c) the command line ---------------------------------------------------------------


def test_scan_exits_1_on_a_finding_in_the_target_and_0_outside_it(
    pads_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", str(pads_file), "--config", str(ROOT / "pyproject.toml")]) == 1
    out = capsys.readouterr().out
    assert "Pad (opset >= 11) with its pads from Constant(value_ints)" in out
    assert "graph/node 'padded'" in out
    assert "onnx >=1.18,<1.21 (of the axis: 1.18.0, 1.19.1, 1.20.1)" in out
    assert "https://github.com/microsoft/onnxscript/pull/3201" in out
    assert "not covered by the corpus" in out
    assert main(["scan", str(pads_file), "--onnx", ">=1.21"]) == 0
    assert "outside the target" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["missing.onnx"], "missing.onnx: no such model file"),
        (["MODEL", "--onnx", "1.18"], "--onnx '1.18': '1.18' is not a version range"),
        (["MODEL", "--ort", ">=x"], "--ort '>=x'"),
        (["JUNK"], "not a readable ONNX model"),
    ],
)
def test_bad_input_exits_2_in_one_line(
    args: list[str], said: str, pads_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = pads_file.with_name("junk.onnx")
    junk.write_bytes(b"not a model at all")
    given = [str(pads_file) if a == "MODEL" else str(junk) if a == "JUNK" else a for a in args]
    assert main(["scan", *given]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1


def test_scan_json_has_the_documented_schema(
    pads_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", str(pads_file), "--json", "--onnx", ""]) == 1
    document = json.loads(capsys.readouterr().out)
    top = {"version", "model", "target", "findings", "outside", "uncovered", "conditional"}
    assert set(document) == top
    assert document["target"] == {"onnx": "", "onnxruntime": ">=1.20"}
    (finding,) = document["findings"]
    assert set(finding) == {
        "detector",
        "construct",
        "where",
        "package",
        "known",
        "affected",
        "releases",
        "checks",
        "reason",
        "link",
        "rewrite",
        "portable",
        "kind",
        "requires",
        "condition",
    }
    assert finding["affected"] == "<1.21" and finding["kind"] == "bug"
    assert all(set(u) == {"domain", "op_type", "count"} for u in document["uncovered"])


def test_fix_writes_the_portable_spelling_which_scans_clean_and_computes_the_same(
    pads_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from onnx.reference import ReferenceEvaluator

    fixed = tmp_path / "fixed.onnx"
    assert main(["scan", str(pads_file), "--fix", str(fixed)]) == 0
    out = capsys.readouterr().out
    assert "fix: constant_value_tensor rewrote" in out
    assert "0 known incompatibilities" in out.split("scanned again:")[1]
    assert compat.scan(fixed, onnx="") == []
    feeds = dict(np.load(pads_file.with_suffix(".npz")))
    before = ReferenceEvaluator(onnx.load(pads_file)).run(None, feeds)
    after = ReferenceEvaluator(onnx.load(fixed)).run(None, feeds)
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_knowledge_json_lists_every_detector(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["knowledge", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [d["id"] for d in document["detectors"]] == [d.id for d in detectors()]
    pad = next(d for d in document["detectors"] if d["id"] == PAD)
    assert pad["versions"] == "<1.21" and pad["rewrite"] == "constant_value_tensor"
    assert pad["phase"] == ["check", "infer"] and pad["raises"] == ["InferenceError"]
    assert "ShapeInferenceError" in pad["match"]
    assert main(["knowledge"]) == 0
    assert f"{len(detectors())} detectors" in capsys.readouterr().out


@pytest.mark.envs
def test_verify_confirms_the_prediction_on_both_sides_of_the_boundary(
    pads_file: Path, shared_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The releases the scan names (1.20.1) and one outside on each side (1.19.1, 1.21.0):
    the checks predicted to fail fail, and nothing else does."""
    args = [
        "scan",
        str(pads_file),
        "--onnx",
        ">=1.20",
        "--verify",
        "--json",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--state-dir",
        str(shared_state),
        "--jobs",
        "2",
    ]
    assert main(args) == 1
    rows = json.loads(capsys.readouterr().out)["verify"]
    assert {r["cell"] for r in rows} == {
        f"onnx{v}-ort1.24.4" for v in ("1.19.1", "1.20.1", "1.21.0")
    }
    assert [r for r in rows if r["verdict"] in ("missed", "false alarm")] == []
    confirmed = {
        (r["cell"], r["check"]) for r in rows if r["predicted"] and r["verdict"] == "agree"
    }
    assert confirmed == {
        (f"onnx{v}-ort1.24.4", c)
        for v in ("1.19.1", "1.20.1")
        for c in ("checker", "shape_inference")
    }


# -- (d) without onnxruntime --------------------------------------------------------------


@pytest.mark.envs
def test_the_library_call_works_in_a_plain_venv_without_onnxruntime(
    tmp_path: Path, pads_file: Path
) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("this test needs uv on PATH (pip install uv nox)")
    venv = tmp_path / "plain"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(venv / "bin" / "python"),
            "onnx",
            "numpy",
            "packaging",
        ],
        check=True,
    )
    script = (
        "import importlib.util, json, sys\n"
        "import compat\n"
        "found = compat.scan(sys.argv[1], onnx='>=1.18')\n"
        "print(json.dumps({'found': [f.detector for f in found],\n"
        "    'ort_installed': importlib.util.find_spec('onnxruntime') is not None,\n"
        "    'ort_imported': 'onnxruntime' in sys.modules}))\n"
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script, str(pads_file)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "found": [PAD],
        "ort_installed": False,
        "ort_imported": False,
    }


def test_verify_calls_a_failure_the_predicted_one_only_when_it_looks_like_it(
    pads_file: Path,
) -> None:
    """In the pads bug's range, a checker failure that raises what the bug declares
    agrees with the prediction, whatever the model's node is named (the bug's own message
    names no node); one that fails some other way is `missed`, and says how it differs
    from the bug."""
    from compat.followup.verify import judge
    from compat.plan.matrix import Cell, Plan

    found = scan_model(pads_file, "", "")
    cell = Cell("1.20.1", "1.24.4", InstallRequest(("onnx==1.20.1", "onnxruntime==1.24.4")))
    plan = Plan((cell,), {"onnx": (cell,)}, cross=False)
    looks = {d.id: d.known for d in detectors()}
    bug = next(d.known for d in detectors() if d.id == PAD)
    assert bug.raises  # the bug declares what it raises
    like = "InferenceError: (op_type:Pad, node name: n1): [ShapeInferenceError] 'pads' input"
    other = "MemoryError: std::bad_alloc"
    results = [
        CheckResult(cell.id, "mine.pads", "checker", Outcome.FAIL, detail, phase="check")
        for detail in (like, other)
    ]
    assert not re.search(bug.match, like)  # the message of another model, as onnx words it
    first, second = judge(plan, found, results, looks, {})
    assert (first.verdict, second.verdict) == ("agree", "missed")
    assert second.detail.startswith(f"not as predicted ({PAD}: raises MemoryError, the bug ")
