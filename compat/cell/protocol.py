"""What crosses between the host and a cell: the only JSON shapes the two sides share.

Three documents cross, each declared here once as a TypedDict (what a reader may rely
on) with one builder (the only place one is made):

- the case spec, `case.json` in a written case folder (compat/corpus/discover.py
  writes it; `CaseData.spec` is it in the cell), part of the case's content hash and
  so of every result-cache key;
- a task, one check of one case (a plan's `tasks`, or one line of `serve`'s stdin);
- a raw record, what the worker answers per task (a line of results.jsonl, of
  `serve`'s stdout), what the host writes for a task whose worker died or stalled, and
  what the result cache stores.

The builders keep keys in the order given: a plan and a served task are written
without sorting their keys (records and specs are written sorted), and the bytes on
the wire stay those the host and stored results already hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Literal, Optional, Tuple, TypedDict, Union

if TYPE_CHECKING:  # Python 3.11's; the cell runs on 3.9, where annotations stay strings
    from typing import Unpack

#: Every outcome a check in a cell may come to (the host's `Outcome` enum, in its order).
OutcomeName = Literal[
    "pass", "fail", "error", "crash", "timeout", "skip", "xfail", "xpass", "flaky", "unsupported"
]
#: The outcomes a raw record holds: a worker's verdict, the host's `crash` or `timeout`
#: for a worker it lost, or `flaky` for runs that disagree. `xfail` and `xpass` are the
#: host's reading of a fail or a pass against the known failures, never on the wire, and
#: so is `unsupported`: the host's reading of a skip at a release's limit (LIMIT) of a
#: user's model, which that release cannot read.
RecordedOutcome = Literal["pass", "fail", "error", "crash", "timeout", "skip", "flaky"]
OUTCOMES: Tuple[OutcomeName, ...] = (
    "pass",
    "fail",
    "error",
    "crash",
    "timeout",
    "skip",
    "xfail",
    "xpass",
    "flaky",
    "unsupported",
)
#: The phase of a skip because the release cannot read the model at all (an IR version
#: or opset newer than it knows): for a corpus case it does not apply; for a user's
#: model it is the model's incompatibility with that release (the host's `unsupported`).
LIMIT = "limit"
RECORDED: Tuple[RecordedOutcome, ...] = (
    "pass",
    "fail",
    "error",
    "crash",
    "timeout",
    "skip",
    "flaky",
)

#: One dimension of an expected output shape: a size, a symbolic name, or unknown.
Dim = Union[int, str, None]


class OptimizedSpec(TypedDict):
    """The graph onnxruntime really executes, as the `ort_optimized` check expects it."""

    op_counts: Dict[str, int]
    meaning: str  # what a mismatch means
    level: Literal["basic", "extended", "all"]


class CustomCheckSpec(TypedDict):
    """Where a case's own check is: a Python file and a function in it."""

    file: str
    function: str


class _CommandNeeds(TypedDict):
    command: str  # the shell command


class CommandSpec(_CommandNeeds, total=False):
    """The `command` check's command (`--run`)."""

    cwd: str  # where it runs ("" or absent: where the worker runs)
    timeout: float  # its seconds when the task gives none (the host always does)
    cache: str  # "no": its results are never cached (`no-cache`); absent otherwise


class _SpecNeeds(TypedDict):
    id: str
    output_shapes: Dict[str, List[Dim]]
    optimized: Optional[OptimizedSpec]
    custom_checks: Dict[str, CustomCheckSpec]
    violations: List[str]  # `value:axis`, `value:rank` or `value:dtype`
    oracle: Literal["numpy", "onnxruntime"]
    convert_to: Optional[int]
    encoding: Literal["npz", "pb"]
    ort_levels: List[str]
    rtol: float
    atol: float


class CaseSpec(_SpecNeeds, total=False):
    """`case.json`: a case's expectations, as the checks in a cell read them."""

    command: CommandSpec  # only for a `command` case
    #: output name -> [rtol, atol], for the outputs with a tolerance of their own
    tolerances: Dict[str, List[float]]


def case_spec(
    *,
    id: str,
    output_shapes: Dict[str, List[Dim]],
    optimized: Optional[OptimizedSpec],
    custom_checks: Dict[str, CustomCheckSpec],
    violations: List[str],
    oracle: Literal["numpy", "onnxruntime"],
    convert_to: Optional[int],
    encoding: Literal["npz", "pb"],
    ort_levels: List[str],
    rtol: float,
    atol: float,
    command: Optional[CommandSpec] = None,
    tolerances: Optional[Dict[str, List[float]]] = None,
) -> CaseSpec:
    """A case's `case.json` (`command` only for a command case, `tolerances` only when
    an output has a tolerance of its own)."""
    spec: CaseSpec = {
        "id": id,
        "output_shapes": output_shapes,
        "optimized": optimized,
        "custom_checks": custom_checks,
        "violations": violations,
        "oracle": oracle,
        "convert_to": convert_to,
        "encoding": encoding,
        "ort_levels": ort_levels,
        "rtol": rtol,
        "atol": atol,
    }
    if command is not None:
        spec["command"] = command
    if tolerances:
        spec["tolerances"] = tolerances
    return spec


class _TaskNeeds(TypedDict):
    case: str  # the case's id
    check: str  # a check's, a part's (`annotations:ort`) or a case's own check's name
    case_dir: str  # the written case folder


class TaskOptions(TypedDict, total=False):
    #: a command's own timeout (`command-timeout`), after which it kills itself
    command_timeout: Optional[float]
    log: str  # where a command writes its whole output ("": nowhere)
    timeout: Optional[float]  # the host's watchdog seconds (the worker does not read it)
    #: run nothing, answer a `skip` with this detail (the host knows the task's runner
    #: cannot finish on this model in this cell)
    skip: str
    cwd: str  # where a command runs: the cell's copy of the project's tree
    attempt: int  # a command's attempt (2: its rerun), appended to its log
    only: List[str]  # a rerun of a pytest command: only these failing tests run
    #: False: `ort_run` searches for no optimizer responsible (checks_ort.UNSEARCHED in
    #: its place), for triage's reduction, which needs that search only sometimes
    blame: bool


class Task(_TaskNeeds, TaskOptions):
    """One check of one case, as a worker reads it."""


def task(case: str, check: str, case_dir: str, **options: Unpack[TaskOptions]) -> Task:
    """A task; `options` appear on the wire in the order given, and only those given."""
    return {"case": case, "check": check, "case_dir": case_dir, **options}


class Plan(TypedDict):
    """`plan.json`: what `python -m compat.cell run` runs."""

    tasks: List[Task]
    limits: List[int]  # the environment's probed onnxruntime limits
    memory: int  # the worker's address-space limit in bytes (0: none)


def plan(tasks: List[Task], limits: List[int], memory: int) -> Plan:
    return {"tasks": tasks, "limits": limits, "memory": memory}


class _RecordNeeds(TypedDict):
    outcome: RecordedOutcome
    phase: str  # where a fail or an error happened: `load`, `session`, `check`, ...
    detail: str


class RecordOptions(TypedDict, total=False):
    case: str
    check: str
    seconds: float
    traceback: str  # the worker's full traceback behind an error or a fail, if any
    index: int  # the task's position in its plan (a plan's records only)
    #: no verdict to keep (a crash, a stop, a slow runner's skip): computed again next time
    retry: bool
    #: each run's outcome, of a `flaky` record and of a command's judged attempts
    runs: List[RecordedOutcome]
    runner: str  # a command's test runner, read from its output: pytest, unittest or ""
    failing: List[str]  # every test id that runner reported failing (absent: too many)
    flaky: List[str]  # a command's tests that failed in some of its attempts only
    observed: List[str]  # a pytest rerun's: which of its `only` tests it really ran


class RawRecord(_RecordNeeds, RecordOptions):
    """What one task came to, before the host classifies it."""


def record(
    outcome: RecordedOutcome, detail: str = "", phase: str = "", **options: Unpack[RecordOptions]
) -> RawRecord:
    """A raw record; `options` follow in the order given, and only those given."""
    return {"outcome": outcome, "phase": phase, "detail": detail, **options}
