"""The table of built-in checks, defined once: every list of checks reads it.

The host reads `name`, `package`, `title` and `what` (the case API, the docs,
repro scripts), `needs` (which checks a case lists) and `suite` (the backend suite's
checks); the cell calls `function`. Importing this module loads no onnx,
onnxruntime or numpy: the check modules import them inside their functions.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, Callable, Dict, Tuple

from compat.cell import checks_annotations, checks_onnx, checks_ort, command
from compat.cell.parts import SEPARATOR, run_parts
from compat.cell.verdict import Phase, Verdict


@dataclass(frozen=True)
class Part:
    """A part of a check computed on its own (compat/cell/parts.py)."""

    name: str  # the task is named CHECK:NAME
    function: Callable[[Any], str]
    depends: Tuple[str, ...]
    #: who runs it, when running past its time is that runner's limit, not the model's
    #: failure: such a timeout is a `skip` that says so (see `slow_runner`)
    slow: str = ""


@dataclass(frozen=True)
class Check:
    """One built-in check."""

    name: str  # the stable id reports and selections use
    package: str  # the package it exercises: "onnx", "onnxruntime", or "both"
    title: str  # what it asks, in words a docs reader understands
    function: Callable[[Any], str]  # function(case) -> detail; raises Verdict otherwise
    what: str  # what it calls, for the reader of a repro script
    #: the installed packages its result depends on: a result is computed once per
    #: distinct set of their versions and shown in every cell that has that set
    depends: Tuple[str, ...] = ("onnx", "onnxruntime", "numpy", "protobuf")  # see below
    cost: float = 0.002  # typical seconds per case on a 2-core machine, for scheduling
    #: computed apart, each keyed by what it depends on, then combined into one result
    #: (`function` is then the whole check in one process: every part, combined)
    parts: Tuple[Part, ...] = ()
    #: run on every case unless the case says otherwise (False: only where asked for)
    default: bool = True
    #: depends on the user's project too (its files, everything installed, the
    #: environment): keyed by all of it (compat/state/cache.py `result_key`), never
    #: answered from a remembered run
    project: bool = False
    #: as `Part.slow`: who runs it, when its timeout is a limit of that runner
    slow: str = ""
    #: the `Case` field it compares with (`convert_to`, `optimized`): a case that leaves
    #: it unset does not list the check, which would have nothing to judge; a drop-in
    #: model declares none, so it gets the default checks that need nothing
    needs: str = ""
    #: its column among the ONNX backend suite's checks (1 first; 0: not run there)
    suite: int = 0


ONNX_ONLY = ("onnx", "numpy", "protobuf")
#: onnx's reference evaluator: a pure-Python interpreter, minutes on a large model with old
#: releases; running past the time is its limit on this model, not the model's failure
REFERENCE = "onnx's reference evaluator"
ORT_ONLY = ("onnxruntime", "numpy")  # onnx parses the model only to explain a refusal
EVERYTHING = ("onnx", "onnxruntime", "numpy", "protobuf")


def _observed_by(function, runtime):
    """`function(case, (runtime,))`: an annotation check observed with one runtime."""

    def check(case):
        return function(case, (runtime,))

    return check


def _observations(function, inferred=False):
    """The annotation check's parts: onnxruntime's observation, onnx's reference's.
    What onnx's shape inference infers depends on onnx, whoever observes it."""
    ort = EVERYTHING if inferred else ORT_ONLY
    return (
        Part("ort", _observed_by(function, "ort"), ort),
        Part("reference", _observed_by(function, "reference"), ONNX_ONLY, REFERENCE),
    )


_ANNOTATIONS = _observations(checks_annotations.check_annotations)
_INFERRED = _observations(checks_annotations.check_inferred_annotations, inferred=True)

CHECKS: Tuple[Check, ...] = (
    Check(
        "checker",
        "onnx",
        "onnx.checker accepts the model (full check)",
        checks_onnx.check_checker,
        "onnx.checker.check_model(model, full_check=True)",
        depends=ONNX_ONLY,
        cost=0.0013,
    ),
    Check(
        "shape_inference",
        "onnx",
        "strict shape inference succeeds and infers the expected shapes",
        checks_onnx.check_shape_inference,
        "onnx.shape_inference.infer_shapes(model, strict_mode=True), then the "
        "inferred output shapes are compared with the case's expectation",
        depends=ONNX_ONLY,
        cost=0.0002,
        suite=3,
    ),
    Check(
        "reference",
        "onnx",
        "onnx's reference evaluator computes the right outputs",
        checks_onnx.check_reference,
        "onnx.reference.ReferenceEvaluator(model).run(None, inputs) vs the oracle",
        depends=ONNX_ONLY,
        cost=0.0018,
        slow=REFERENCE,
        suite=2,
    ),
    Check(
        "ort_run",
        "onnxruntime",
        "onnxruntime computes the right outputs at every optimization level",
        checks_ort.check_ort_run,
        "onnxruntime.InferenceSession at every optimization level vs the oracle",
        depends=ORT_ONLY,
        cost=0.008,
        suite=1,
    ),
    Check(
        "ort_optimized",
        "onnxruntime",
        "onnxruntime's optimized graph has the expected structure",
        checks_ort.check_ort_optimized,
        "the op counts of onnxruntime's optimized_model_filepath graph",
        depends=ORT_ONLY,  # onnx only parses the optimized graph to count its ops
        cost=0.001,
        needs="optimized",
    ),
    Check(
        "annotations",
        "both",  # observed with onnx's reference evaluator and onnxruntime
        "the declared shape annotations hold on real runs",
        lambda case: run_parts(case, "annotations", _ANNOTATIONS),
        "the declared shape annotations on real runs (compat/cell/semantics.py)",
        depends=EVERYTHING,
        cost=0.002,
        parts=_ANNOTATIONS,
    ),
    Check(
        "inferred_annotations",
        "onnx",
        "annotations added by onnx shape inference hold on real runs",
        lambda case: run_parts(case, "inferred_annotations", _INFERRED),
        "annotations added by onnx shape inference on real runs",
        depends=EVERYTHING,
        cost=0.0016,
        parts=_INFERRED,
        suite=4,
    ),
    Check(
        "annotations_builtin",
        "onnx",
        "onnx's own annotation checker agrees with ours",
        checks_annotations.check_annotations_builtin,
        "ReferenceEvaluator(check_shape_annotations=True) vs ours",
        depends=ONNX_ONLY,
        cost=0.0004,
        slow=REFERENCE,
    ),
    Check(
        "version_converter",
        "onnx",
        "onnx's version converter produces a valid model that computes the same outputs",
        checks_onnx.check_version_converter,
        "onnx.version_converter.convert_version(model, target), then the "
        "checker and onnxruntime on the result",
        depends=EVERYTHING,
        cost=0.0106,
        needs="convert_to",
    ),
    Check(
        "command",
        "both",
        "the project's own command exits 0 in the cell's environment",
        command.check_command,
        "the command (`--run`), through the shell, in the cell's environment",
        cost=1.0,
        default=False,
        project=True,
    ),
)

BY_NAME: Dict[str, Check] = {check.name: check for check in CHECKS}
#: Every part by its task's name, `annotations:ort`.
PARTS: Dict[str, Part] = {
    check.name + SEPARATOR + part.name: part for check in CHECKS for part in check.parts
}


def slow_runner(task: str) -> str:
    """Who runs a task (`reference`, `annotations:reference`) when its timeout is that
    runner's limit and so a skip; "" when a timeout is a timeout."""
    if task in PARTS:
        return PARTS[task].slow
    return BY_NAME[task].slow if task in BY_NAME else ""


def tasks_of(check: str) -> Tuple[str, ...]:
    """The tasks that compute a check: its parts, or the check itself."""
    parts = BY_NAME[check].parts if check in BY_NAME else ()
    return tuple(check + SEPARATOR + p.name for p in parts) or (check,)


def find_check(case: Any, name: str) -> Callable[[Any], str]:
    """The function of a built-in check or part, or of a check the case defines in its
    own file."""
    if name in BY_NAME:
        return BY_NAME[name].function
    if name in PARTS:
        return PARTS[name].function
    custom = case.spec.get("custom_checks", {}).get(name)
    if custom is None:
        raise Verdict("error", "load", "unknown check %r for case %r" % (name, case.spec.get("id")))
    spec = importlib.util.spec_from_file_location(
        "compat_custom_%d" % abs(hash(custom["file"])), custom["file"]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with Phase("load"):
        spec.loader.exec_module(module)
    function: Callable[[Any], str] = getattr(module, custom["function"])
    return function
