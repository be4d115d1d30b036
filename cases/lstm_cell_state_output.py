"""LSTM whose optional third output, the final cell state `Y_c`, is used (a graph output,
read by a later node, or both inside an If branch), next to the LSTM whose `Y_c` is
not produced or not read.

A stateful recurrent model hands its state to the next call: Silero VAD v6 as exported
by PyTorch (faster-whisper's `silero_vad_v6.onnx`) returns the LSTM's `Y_h` and `Y_c`
as its `hn` and `cn` graph outputs, and `silero_vad_half.onnx` runs its LSTM in an If
branch whose `Y_c` feeds later nodes. onnx's reference evaluator
(onnx/reference/ops/op_lstm.py) computed the cell state but returned only `Y` and
`Y_h` before onnx 1.23: a used `Y_c` is never bound, so the run fails when a node reads
it or the graph returns it. onnx PR #7664 (merged, in onnx 1.23) returns it. An LSTM
whose `Y_c` is named but read by nothing runs: the evaluator never asks for it.

Observed in plain venvs and in this matrix: on every onnx release from 1.14.1 to 1.22.0
`reference` fails on every form with `Y_c` used, at `run`: a RuntimeError where `Y_c`
is a graph or branch output ("Unable to find output name 'c' in [...]"); where a node
reads it, a KeyError ('c') up to onnx 1.15.0 and from 1.16.2 a RuntimeError ("Unable
to find input 'c' in known results [...]"), inside an If branch alike. onnx 1.23.2
passes every form, its `Y_c` equal to the numpy oracle's. `annotations` and
`inferred_annotations` pass everywhere: onnxruntime observes the values, and a
reference run that fails is reported as "not observed", no verdict. onnxruntime
(1.15.1-1.32.0), onnx's checker and shape inference are right on every form. Before
onnx 1.23 the reference LSTM also raises NotImplementedError on a bidirectional LSTM,
whatever its outputs: another gap, not this family's, and not detected here.

Rare form: `LSTM` whose `Y_c` (3rd output) is a graph output or read by a node
Common twin: `LSTM` with only `Y` / `Y_h` used (`Y_c` absent or unread)
Shows: onnx's reference evaluator returns no `Y_c` before onnx 1.23 (onnx PR #7664)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from compat.core.case import Case, Detector, KnownFailure
from compat.corpus.make import const, model, randn, rng, tensor, unknown
from compat.corpus.walk import find

SEQ, BATCH, INPUT, HIDDEN = 4, 2, 3, 5
#: form -> (the LSTM's outputs, the graph's outputs): the Y_c is `c` (or `tc` in a branch)
FORMS = {
    "y_h": (("y", "h"), ("y", "h")),
    "c_unused": (("y", "h", "c"), ("y", "h")),
    "state_output": (("", "h", "c"), ("h", "c")),
    "c_consumed": (("y", "h", "c"), ("s",)),
    "if_branch_consumed": (("ty", "th", "tc"), ("s",)),
}
NO_CELL_STATE = KnownFailure(
    package="onnx",
    versions="<1.23",
    checks=("reference",),
    reason="the reference LSTM returns Y and Y_h only: a Y_c that a node reads or the "
    "graph returns is never bound",
    link="https://github.com/onnx/onnx/pull/7664",
    phase=("run",),
    # a graph output: "Unable to find output name"; a node's input: a KeyError up to
    # onnx 1.15, "Unable to find input ... in known results" from 1.16
    raises=("RuntimeError", "KeyError"),
    match=r"Unable to find (output name|input) '[^']+'|^KeyError: '[^']+'",
)


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-v)))


def _oracle(
    x: np.ndarray, weights: dict[str, np.ndarray], h: np.ndarray, c: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ONNX LSTM's equations (forward, default activations, no peepholes) in float64:
    gates i, o, f, c in that order; returns Y (seq, 1, batch, hidden), Y_h and Y_c
    (1, batch, hidden) in float32."""
    w, r, b = (weights[k][0].astype(np.float64) for k in ("W", "R", "B"))
    bias = b[: 4 * HIDDEN] + b[4 * HIDDEN :]
    h, c = h[0].astype(np.float64), c[0].astype(np.float64)
    ys = []
    for step in x.astype(np.float64):
        gates = step @ w.T + h @ r.T + bias
        i, o, f, g = np.split(gates, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        ys.append(h)
    y = np.stack(ys)[:, None]
    return y.astype(np.float32), h[None].astype(np.float32), c[None].astype(np.float32)


def _weights() -> dict[str, np.ndarray]:
    gen = rng(35)
    scale = np.float32(0.5)
    return {
        "W": randn(gen, 1, 4 * HIDDEN, INPUT) * scale,
        "R": randn(gen, 1, 4 * HIDDEN, HIDDEN) * scale,
        "B": randn(gen, 1, 8 * HIDDEN) * scale,
    }


def _lstm(outputs: tuple[str, ...]) -> onnx.NodeProto:
    """LSTM(x, W, R, B, "", h0, c0): a stateful step, its state fed in as Silero's is."""
    inputs = ["x", "W", "R", "B", "", "h0", "c0"]
    return helper.make_node("LSTM", inputs, list(outputs), hidden_size=HIDDEN)


def _if_node() -> onnx.NodeProto:
    """If(cond): then runs the LSTM and adds its Y_h and Y_c; else returns Y_h twice."""
    state = [tensor("ts", np.float32, unknown(3))]
    then = helper.make_graph(
        [_lstm(FORMS["if_branch_consumed"][0]), helper.make_node("Add", ["th", "tc"], ["ts"])],
        "then",
        [],
        state,
    )
    other = helper.make_graph(
        [_lstm(("", "eh")), helper.make_node("Add", ["eh", "eh"], ["es"])],
        "else",
        [],
        [tensor("es", np.float32, unknown(3))],
    )
    return helper.make_node("If", ["cond"], ["s"], then_branch=then, else_branch=other)


def _case(form: str) -> Case:
    lstm_outputs, graph_outputs = FORMS[form]
    gen = rng(36)
    state = [1, BATCH, HIDDEN]
    inputs = {"x": randn(gen, SEQ, BATCH, INPUT), "h0": randn(gen, *state)}
    inputs["c0"] = randn(gen, *state)
    weights = _weights()
    y, h, c = _oracle(inputs["x"], weights, inputs["h0"], inputs["c0"])
    values = {"y": y, "h": h, "c": c, "s": h + c}
    shapes = {"y": [SEQ, 1, BATCH, HIDDEN], "h": state, "c": state, "s": state}
    graph_inputs = [tensor(k, np.float32, list(v.shape)) for k, v in inputs.items()]
    if form == "if_branch_consumed":
        nodes = [_if_node()]
        inputs = {"cond": np.array(True), **inputs}
        graph_inputs.insert(0, tensor("cond", np.bool_, []))
    else:
        nodes = [_lstm(lstm_outputs)]
        if "s" in graph_outputs:
            nodes.append(helper.make_node("Add", ["h", "c"], ["s"]))
    built = model(
        nodes,
        graph_inputs,
        [tensor(k, np.float32, unknown(len(shapes[k]))) for k in graph_outputs],
        [const(k, v) for k, v in weights.items()],
    )
    spelled = ", ".join(o or '""' for o in lstm_outputs)
    where = " in an If branch" if form.startswith("if_") else ""
    return Case(
        id=f"lstm_cell_state_output.{form}",
        description=f"LSTM(x, W, R, B, '', h0, c0) -> ({spelled}){where}, returning "
        + ", ".join(graph_outputs),
        model=built,
        inputs=inputs,
        expected={k: values[k] for k in graph_outputs},
        output_shapes={k: shapes[k] for k in graph_outputs},
        known=(NO_CELL_STATE,) if form not in ("y_h", "c_unused") else (),
    )


def cases() -> list[Case]:
    return [_case(form) for form in FORMS]


def _cell_state_used(model: onnx.ModelProto) -> list[str]:
    """One-direction LSTM nodes whose Y_c (3rd output) is named and used: an output of
    its graph, subgraph or function body, or read by a node there (a subgraph reading it
    from an enclosing scope included). An unread Y_c is never asked for; a bidirectional
    LSTM fails before its outputs are bound (NotImplementedError), another gap."""
    found = []
    for site in find(model, "LSTM"):
        outputs = site.node.output
        cell = outputs[2] if len(outputs) > 2 else ""
        if not cell or site.attribute("direction", b"forward") == b"bidirectional":
            continue
        if cell in site.scope.outputs or site.scope.readers.get(cell):
            found.append(site.path)
    return found


DETECTORS = [
    Detector(
        id="lstm_cell_state_output.cell_state_used",
        construct="LSTM (forward or reverse) whose Y_c (3rd output) is a graph output or read "
        "by a node, in any scope",
        known=NO_CELL_STATE,
        find=_cell_state_used,
    ),
]
