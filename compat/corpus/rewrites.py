"""The same model, spelled another legal way: the catalogue of equivalence-preserving
rewrites, and the selection over it (`--rewrites GLOB`, `--mutate`). Each rewrite is a
pure function of a model, returning the rewritten copy and the names of the nodes (or
values) it touched, or None where it does not apply. They need only onnx, so they run on
the host (`python -m compat variants`, `--mutate`). The functions themselves live by
kind: compat/corpus/rewrite_nodes.py (how the graph computes) and
compat/corpus/rewrite_declarations.py (what it declares); this table is the one list
every user of the catalogue reads.

The seeds' lesson made general: the same computation, spelled differently, breaks on
different releases (Constant value_ints pads, onnxscript #3201; Split with an empty
split input, onnx #5222; Squeeze with an empty axes input, onnxruntime #22035; float16
in int32_data, onnx #1539). Links are those the corpus's families cite.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, replace

import onnx

from compat.core.case import Case
from compat.core.errors import UsageError
from compat.corpus.rewrite_base import Applied
from compat.corpus.rewrite_declarations import (
    dim_params_anonymous,
    dim_params_renamed,
    ir_version_minimum,
    opset_down,
    opset_up,
    value_info_inferred,
    value_info_removed,
)
from compat.corpus.rewrite_nodes import (
    constant_value_attributes,
    constant_value_tensor,
    constants_as_initializers,
    float16_int32_data,
    float16_raw_data,
    functions_inlined,
    initializers_as_constants,
    node_outlined,
    optional_input_explicit_empty,
    optional_input_omitted,
)


@dataclass(frozen=True)
class Rewrite:
    name: str
    description: str
    function: Callable[[onnx.ModelProto], Applied | None]
    reports: tuple[str, ...] = ()
    #: it changes the declared shape annotations themselves: a case that expects
    #: annotation violations or symbolic output shapes does not keep its expectations
    annotations: bool = False


CATALOGUE: tuple[Rewrite, ...] = (
    Rewrite(
        "constant_value_attributes",
        "Constant(value=1-D tensor) -> value_ints / value_floats",
        constant_value_attributes,
        ("https://github.com/microsoft/onnxscript/pull/3201",),
    ),
    Rewrite(
        "constant_value_tensor",
        "Constant(value_ints / value_floats / value_int / value_float) -> Constant(value=tensor)",
        constant_value_tensor,
    ),
    Rewrite(
        "initializers_as_constants", "initializers -> Constant nodes", initializers_as_constants
    ),
    Rewrite(
        "constants_as_initializers",
        "Constant(value=tensor) nodes -> initializers",
        constants_as_initializers,
    ),
    Rewrite(
        "optional_input_explicit_empty",
        'the next omitted optional input written "" (Split(x) -> Split(x, ""))',
        optional_input_explicit_empty,
        (
            "https://github.com/onnx/onnx/issues/5222",
            "https://github.com/microsoft/onnxruntime/issues/22035",
        ),
    ),
    Rewrite(
        "optional_input_omitted",
        'trailing "" inputs dropped (Conv(x, W, "") -> Conv(x, W))',
        optional_input_omitted,
    ),
    Rewrite(
        "dim_params_renamed",
        "every symbolic dimension renamed consistently",
        dim_params_renamed,
        annotations=True,
    ),
    Rewrite(
        "value_info_removed",
        "intermediate value annotations dropped",
        value_info_removed,
        annotations=True,
    ),
    Rewrite(
        "value_info_inferred",
        "intermediate value annotations added by shape inference",
        value_info_inferred,
        annotations=True,
    ),
    Rewrite(
        "float16_int32_data",
        "float16 initializers: raw_data -> int32_data",
        float16_int32_data,
        ("https://github.com/onnx/onnx/issues/1539",),
    ),
    Rewrite("float16_raw_data", "float16 initializers: int32_data -> raw_data", float16_raw_data),
    Rewrite(
        "ir_version_minimum", "IR version lowered to the least its opsets need", ir_version_minimum
    ),
    Rewrite(
        "dim_params_anonymous",
        "symbolic dimensions of outputs and intermediate values made anonymous",
        dim_params_anonymous,
        annotations=True,
    ),
    Rewrite(
        "opset_up", "the default-domain opset raised by one (onnx's version converter)", opset_up
    ),
    Rewrite(
        "opset_down",
        "the default-domain opset lowered by one (onnx's version converter)",
        opset_down,
    ),
    Rewrite("functions_inlined", "model-local functions inlined (onnx.inliner)", functions_inlined),
    Rewrite("node_outlined", "a node outlined into a model-local function", node_outlined),
)


BY_NAME = {r.name: r for r in CATALOGUE}


def select(patterns: str | None) -> tuple[Rewrite, ...]:
    """The rewrites matching a comma-separated list of globs (all when None)."""
    if not patterns:
        return CATALOGUE
    globs = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = tuple(r for r in CATALOGUE if any(fnmatch.fnmatchcase(r.name, g) for g in globs))
    if not chosen:
        names = ", ".join(BY_NAME)
        raise UsageError(f"--rewrites {patterns}: matches no rewrite; the rewrites are: {names}")
    return chosen


def variants(
    model: onnx.ModelProto, rewrites: tuple[Rewrite, ...] = CATALOGUE
) -> list[tuple[Rewrite, Applied]]:
    """Every rewrite that applies to the model, with its result."""
    found = []
    for rewrite in rewrites:
        applied = rewrite.function(model)
        if applied is not None:
            found.append((rewrite, applied))
    return found


def mutated(case: Case, rewrites: tuple[Rewrite, ...] = CATALOGUE) -> list[Case]:
    """The case spelled every other way that applies (`--mutate`): ids `CASE~REWRITE`,
    the original's inputs, oracle, checks and expectations, known bugs included."""
    symbolic = any(isinstance(d, str) for dims in case.output_shapes.values() for d in dims)
    found = []
    for rewrite, applied in variants(case.model, rewrites):
        if rewrite.annotations and (case.violations or symbolic):
            continue  # its expectations are about the annotations this rewrite changes
        described = f"{case.description} ({rewrite.description})"
        found.append(
            replace(
                case, id=f"{case.id}~{rewrite.name}", model=applied.model, description=described
            )
        )
    return found
