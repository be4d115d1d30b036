"""The case API: what a module in cases/ declares (see cases/README.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

from compat.cell.checks import CHECKS

if TYPE_CHECKING:
    import numpy as np
    import onnx

Package = Literal["onnx", "onnxruntime"]
Dim = int | str | None

#: Built-in checks, in table order, with the package each one exercises ("both": its
#: rows appear against the releases of either package), and what each asks, in words
#: a docs reader understands. Both read the one table, `compat.cell.checks.CHECKS`.
CHECK_AXIS: dict[str, Package | Literal["both"]] = {
    c.name: cast('Package | Literal["both"]', c.package) for c in CHECKS
}
BUILTIN_CHECKS = tuple(c.name for c in CHECKS if c.default)
#: The checks that compare with something a case declares, and the `Case` field each
#: needs set to be listed (the table's `needs`).
NEEDS: dict[str, str] = {c.name: c.needs for c in CHECKS if c.needs}
CHECK_TITLES: dict[str, str] = {c.name: c.title for c in CHECKS}


@dataclass(frozen=True)
class KnownFailure:
    """A reported upstream bug: in `versions` of `package`, `checks` are expected to fail,
    and to fail as `phase`, `raises` and `match` say (as pytest's `xfail(raises=...)`):
    a failure in the range that looks otherwise is not this bug, and stays unexpected."""

    package: Package
    versions: str  # a range such as ">=1.18,<1.21"; "" means every release
    checks: tuple[str, ...]
    reason: str
    link: str
    #: the symptoms this bug shows; a known crash must say so ("crash"), or it stays unexpected
    outcomes: tuple[str, ...] = ("fail", "error")
    #: the phases it fails at, any of them (`check`, `infer`, `compare`, `session@all`;
    #: `session` or `run` alone: at any level); () says nothing
    phase: tuple[str, ...] = ()
    #: the exception types it raises, any of them, by name (`InferenceError`): the name
    #: the failure's detail starts with (`InferenceError: ...`); () says nothing
    raises: tuple[str, ...] = ()
    #: a regular expression searched in the failure's detail; "" says nothing
    match: str = ""

    def __post_init__(self) -> None:
        for name in ("phase", "raises"):
            value = getattr(self, name)
            if isinstance(value, str):  # ("run") is a string: one phase, not three letters
                raise TypeError(f"KnownFailure.{name} is a tuple of names, like ({value!r},)")


@dataclass(frozen=True)
class Detector:
    """Where a model carries a construct that a known upstream bug hits (`onnx-compat
    scan`): declared beside the family whose rare form shows the bug, from the same
    definitions, in its module's `DETECTORS` list.

    `find(model)` returns the places the construct occurs, as paths through the model
    (`graph/node 'pads'`, `graph/node 'loop'/body/node 'x'`, `function 'f'/node 'y'`),
    subgraphs and local functions included; empty when the model does not carry it.
    It must only read the model (onnx and numpy, no onnxruntime), quickly.
    """

    id: str  # stable, glob-able: FAMILY.NAME, like pad_pads_from_constant.value_ints
    construct: str  # in words: "Pad with its pads from Constant(value_ints)"
    known: KnownFailure  # the bug: package, release range, checks, link
    find: Callable[[onnx.ModelProto], list[str]]
    #: the rewrite of the catalogue (compat/corpus/rewrites.py) that spells the construct
    #: the portable way; "" when there is none
    rewrite: str = ""
    #: what else a cell must have installed for the bug to show, as requirements
    #: (`numpy>=2.4`): the prediction holds only in the cells that have it
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class Optimized:
    """The structure of the graph onnxruntime really executes, as op-type counts."""

    op_counts: dict[str, int]
    meaning: str  # what a mismatch means, e.g. "bias not fused into Conv"
    level: Literal["basic", "extended", "all"] = "all"


@dataclass(frozen=True)
class CustomCheck:
    """A check a case defines itself; `function(case)` runs inside the worker.

    The file must import only the standard library, onnx, onnxruntime and numpy.
    """

    name: str
    file: str
    function: str
    #: the package whose releases it exercises (its results are drawn on that axis and
    #: keyed by it); "both": drawn on both axes, keyed by both
    package: Package | Literal["both"] = "onnxruntime"


@dataclass(frozen=True, eq=False)
class Case:
    """One model of the corpus, its inputs, its oracle and its expectations."""

    id: str
    description: str
    model: onnx.ModelProto
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    expected: dict[str, np.ndarray] = field(default_factory=dict)
    output_shapes: Mapping[str, Sequence[Dim]] = field(default_factory=dict)
    optimized: Optimized | None = None
    known: tuple[KnownFailure, ...] = ()
    #: more runs for the annotation checks, each with a fresh binding map
    extra_runs: tuple[dict[str, np.ndarray], ...] = ()
    #: violations every run must find, as `value:axis`, `value:rank` or `value:dtype`
    violations: tuple[str, ...] = ()
    custom_checks: tuple[CustomCheck, ...] = ()
    builtin_checks: tuple[str, ...] = BUILTIN_CHECKS
    #: the opset `version_converter` converts the model to (None: no such check)
    convert_to: int | None = None
    #: "numpy": `expected` is the oracle; "onnxruntime": the outputs with
    #: optimizations disabled are (for drop-in models, which have no oracle)
    oracle: Literal["numpy", "onnxruntime"] = "numpy"
    #: how inputs and outputs travel to the cells: "npz" (numpy arrays), or "pb" (one
    #: TensorProto / SequenceProto / OptionalProto file per value, as ONNX's backend
    #: test data: for sequences, optionals and types numpy cannot carry)
    encoding: Literal["npz", "pb"] = "npz"
    #: the onnxruntime optimization levels `ort_run` compares at
    ort_levels: tuple[str, ...] = ("disabled", "basic", "extended", "all")
    #: labels for reports, e.g. the op type a backend test exercises
    tags: tuple[str, ...] = ()
    #: the `command` check's shell command and working directory (`--run`)
    command: Mapping[str, str] | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    #: output name -> (rtol, atol), for the outputs compared with a tolerance of their own
    output_tolerances: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def checks(self) -> tuple[str, ...]:
        # a check with nothing declared to compare is no verdict at all: not listed
        declared = {check: getattr(self, needs) for check, needs in NEEDS.items()}
        builtin = tuple(c for c in self.builtin_checks if declared.get(c, True))
        return builtin + tuple(c.name for c in self.custom_checks)

    def check_axis(self, check: str) -> Package | Literal["both"]:
        for custom in self.custom_checks:
            if custom.name == check:
                return custom.package
        return CHECK_AXIS[check]
