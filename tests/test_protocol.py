"""The host–cell protocol (compat/cell/protocol.py): its shapes are the ones really on the
wire, in both directions, byte for byte as stored results and cache keys hold them."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest

from compat.cell import protocol
from compat.cell.loop import run_task
from compat.cell.parts import combine
from compat.core.case import CustomCheck
from compat.core.outcomes import Outcome
from compat.corpus.discover import discover_cases, spec_of, write_case
from compat.execute.reruns import judge_runs
from compat.execute.worker import Task, run_worker
from compat.state import cellcode
from tests.conftest import ROOT
from tests.helpers import add_one_case, case_dir, hostile_case


def keys(typed: Any) -> set[str]:
    """Every key a TypedDict declares, its bases' included."""
    return set(typed.__required_keys__ | typed.__optional_keys__)


def assert_shaped(value: dict[str, Any], typed: Any) -> None:
    """Only declared keys, and every required one."""
    assert set(value) <= keys(typed), sorted(set(value) - keys(typed))
    assert typed.__required_keys__ <= set(value), sorted(typed.__required_keys__ - set(value))


def test_the_hosts_outcomes_are_the_protocols_names_in_order() -> None:
    assert tuple(o.value for o in Outcome) == protocol.OUTCOMES
    assert get_args(protocol.OutcomeName) == protocol.OUTCOMES
    assert get_args(protocol.RecordedOutcome) == protocol.RECORDED
    # a record never says xfail or xpass: those are the host's reading of a fail or a pass
    assert set(protocol.OUTCOMES) - set(protocol.RECORDED) == {"xfail", "xpass", "unsupported"}


def _everything() -> list[tuple[dict[str, Any], Any]]:
    """One output of every builder, with every option given."""
    spec = spec_of(add_one_case(command={"command": "pytest -q", "cwd": "/p"}))
    given = protocol.task("c", "k", "/d", command_timeout=None, log="", timeout=2.5, skip="x")
    made = protocol.record(
        "flaky",
        "d",
        "check",
        case="c",
        check="k",
        seconds=1.5,
        traceback="t",
        index=3,
        retry=True,
        runs=["pass", "fail"],
    )
    return [
        (dict(spec), protocol.CaseSpec),
        (dict(protocol.task("c", "k", "/d")), protocol.Task),
        (dict(given), protocol.Task),
        (dict(protocol.plan([given], [1, 2], 0)), protocol.Plan),
        (dict(made), protocol.RawRecord),
        (dict(protocol.record("pass")), protocol.RawRecord),
    ]


@pytest.mark.parametrize("index", range(len(_everything())))
def test_every_builder_gives_json_that_reads_back_the_same(index: int) -> None:
    value, typed = _everything()[index]
    assert json.loads(json.dumps(value)) == value
    assert_shaped(value, typed)


def test_a_task_line_keeps_its_bytes() -> None:
    """A plan's tasks carry every field (null and "" too); a served task only its three.
    Both are written without sorting keys, so their order is part of the wire."""
    plan = protocol.plan([Task("a.b", "ort_run", "/c", log="l", timeout=2.0).line()], [], 0)
    assert json.dumps(plan) == (
        '{"tasks": [{"case": "a.b", "check": "ort_run", "case_dir": "/c", '
        '"command_timeout": null, "log": "l", "timeout": 2.0}], "limits": [], "memory": 0}'
    )
    served = protocol.task("a.b", "ort_run", "/c")
    assert json.dumps(served) == '{"case": "a.b", "check": "ort_run", "case_dir": "/c"}'


#: case.json of a case with every field set, as the result cache's keys were made from
#: (its bytes are part of the case's content hash)
SPEC = """{
 "atol": 1e-06,
 "command": {
  "command": "pytest -q",
  "cwd": "/p"
 },
 "convert_to": 13,
 "custom_checks": {
  "mine": {
   "file": "/x/mine.py",
   "function": "check_mine"
  }
 },
 "encoding": "npz",
 "id": "tiny.add_one",
 "optimized": {
  "level": "all",
  "meaning": "Identity kept",
  "op_counts": {
   "Identity": 0
  }
 },
 "oracle": "numpy",
 "ort_levels": [
  "disabled",
  "basic",
  "extended",
  "all"
 ],
 "output_shapes": {
  "y": [
   2
  ]
 },
 "rtol": 1e-05,
 "violations": [
  "y:0"
 ]
}"""


def test_a_case_spec_keeps_its_bytes(tmp_path: Path) -> None:
    case = add_one_case(
        custom_checks=(CustomCheck("mine", "/x/mine.py", "check_mine"),),
        violations=("y:0",),
        convert_to=13,
        command={"command": "pytest -q", "cwd": "/p"},
    )
    files = write_case(case, tmp_path)
    assert (files.directory / "case.json").read_text() == SPEC


def test_every_case_of_the_corpus_writes_a_declared_spec(tmp_path: Path) -> None:
    cases = discover_cases(ROOT / "cases").cases
    assert len(cases) > 100
    for case in cases:
        files = write_case(case, tmp_path)
        spec = json.loads((files.directory / "case.json").read_text())
        assert spec == spec_of(case)
        assert_shaped(spec, protocol.CaseSpec)
        if spec["optimized"] is not None:
            assert_shaped(spec["optimized"], protocol.OptimizedSpec)
        for custom in spec["custom_checks"].values():
            assert_shaped(custom, protocol.CustomCheckSpec)
        if "command" in spec:
            assert_shaped(spec["command"], protocol.CommandSpec)
    # the corpus exercises the optional shapes, or the loop above proved little
    specs = [spec_of(c) for c in cases]
    assert any(s["optimized"] for s in specs) and any(s["custom_checks"] for s in specs)


@pytest.mark.subprocess
def test_a_real_workers_records_hold_only_declared_keys(tmp_path: Path) -> None:
    directory = case_dir(hostile_case("ok", "explode", "wrong", "segfault"), tmp_path / "cases")
    tasks = [
        Task("tiny.hostile", name, directory)
        for name in ("ok", "explode", "wrong", "segfault", "nonesuch")
    ]
    records = run_worker(Path(sys.executable), tasks, tmp_path / "cell", timeout=30)
    assert [r["outcome"] for r in records] == ["pass", "error", "fail", "crash", "error"]
    for record in records:  # the worker's own, and the host's for the crash
        assert_shaped(record, protocol.RawRecord)
    judged = judge_runs([records[0], records[2]])
    assert judged["outcome"] == "flaky"
    assert_shaped(judged, protocol.RawRecord)
    assert_shaped(combine("both", records[:2]), protocol.RawRecord)
    skipped = run_task({}, protocol.task("tiny.hostile", "ok", directory, skip="too slow"))
    assert skipped["outcome"] == "skip"
    assert_shaped(skipped, protocol.RawRecord)


@pytest.mark.subprocess
def test_a_served_workers_answer_holds_only_declared_keys(tmp_path: Path) -> None:
    """`python -m compat.cell serve`, fed one task line as the host writes it."""
    directory = case_dir(hostile_case("ok"), tmp_path / "cases")
    root = cellcode.stage(tmp_path / "code")
    line = json.dumps(protocol.task("tiny.hostile", "ok", directory)) + "\n"
    done = subprocess.run(
        cellcode.command(Path(sys.executable), "serve"),
        input=line,
        env=cellcode.environ(root),
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    ready, answer = (json.loads(x) for x in done.stdout.splitlines())
    assert ready == {"ready": True}
    assert answer["outcome"] == "pass"
    assert_shaped(answer, protocol.RawRecord)


def _reads(target: str) -> dict[tuple[str, str], set[str]]:
    """(file, expression) -> the string keys read from it in compat/cell (`x["k"]`,
    `x.get("k")`), for expressions ending with `target`."""
    found: dict[tuple[str, str], set[str]] = {}
    for path in sorted((ROOT / "compat" / "cell").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                value, key = node.value, node.slice.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                value, key = node.func.value, node.args[0].value
            else:
                continue
            said = ast.unparse(value)
            if isinstance(key, str) and (said == target or said.endswith("." + target)):
                found.setdefault((path.name, said), set()).add(key)
    return found


@pytest.mark.parametrize(
    ("target", "typed"),
    [
        ("spec", protocol.CaseSpec),
        ("want", protocol.OptimizedSpec),  # checks_ort.py: the spec's `optimized`
        ("custom", protocol.CustomCheckSpec),  # checks.py: one of its `custom_checks`
        ("task", protocol.Task),
        ("plan", protocol.Plan),
    ],
)
def test_the_cell_reads_only_declared_keys(target: str, typed: Any) -> None:
    """What the checks read from `case.spec` and its parts, the loop from a task and a
    plan, is declared (command.py's `spec` is the command's own)."""
    reads = _reads(target)
    assert reads
    for (name, said), read in reads.items():
        declared = protocol.CommandSpec if (name, said) == ("command.py", "spec") else typed
        assert read <= keys(declared), f"{name}: {said} reads {sorted(read - keys(declared))}"
