"""Observing values on real runs: onnxruntime for top-level values, onnx's reference
evaluator node by node (subgraph bodies included), then judging them with a fresh β."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import onnx

from compat.cell.semantics import RunVerdict, judge, top_level_names


def ort_observer(model: Any) -> Callable[[Dict[str, np.ndarray]], List[Tuple[str, Any]]]:
    """An onnxruntime session of a copy of the model with every annotated top-level value
    exposed, as a function of the feeds: built once, run for every run of a case."""
    import onnxruntime as ort

    watched = [
        n for n in top_level_names(model.graph) if n not in {i.name for i in model.graph.input}
    ]
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    # The annotations under judgement must not steer or stop the run: onnxruntime
    # sees the input annotations only (it enforces those itself) and every other
    # annotated value as an untyped extra output, whose type it infers.
    del copy.graph.value_info[:]
    for output in copy.graph.output:
        output.ClearField("type")
    outputs = {o.name for o in copy.graph.output}
    for name in watched:
        if name not in outputs:
            copy.graph.output.add().name = name
    from compat.cell.session import session_options

    session = ort.InferenceSession(
        copy.SerializeToString(), session_options(), providers=["CPUExecutionProvider"]
    )
    names = [o.name for o in session.get_outputs()]

    def observe(feeds: Dict[str, np.ndarray]) -> List[Tuple[str, Any]]:
        values = dict(zip(names, session.run(None, feeds)))
        return [(n, values[n]) for n in watched if n in values]

    return observe


def reference_observer(
    model: Any,
) -> Callable[[Dict[str, np.ndarray]], List[Tuple[str, Any]]]:
    """The reference evaluator, recording every value as it is produced, as a function of
    the feeds: built and instrumented once, run for every run of a case."""
    record = reference_recorder(model)

    def observe(feeds: Dict[str, np.ndarray]) -> List[Tuple[str, Any]]:
        return record(feeds)[1]

    return observe


def reference_recorder(
    model: Any,
) -> Callable[[Dict[str, np.ndarray]], Tuple[List[Any], List[Tuple[str, Any]]]]:
    """The reference evaluator as a function of the feeds giving (its outputs, every value
    recorded as it was produced): built and instrumented once, run for every run.

    Each node's `run` (nested If/Loop/Scan bodies included) is wrapped to
    record its outputs, and each nested evaluator's `run` to record the
    body's inputs: this works on every onnx release with onnx.reference.
    """
    from onnx.reference import ReferenceEvaluator

    observed: List[Tuple[str, Any]] = []
    evaluator = ReferenceEvaluator(model)

    def instrument(ev: Any, nested: bool) -> None:
        if nested:
            run = ev.run

            def run_recording(
                output_names: Any, feed_inputs: Any, *args: Any, **kwargs: Any
            ) -> Any:
                for name in getattr(ev, "input_names", []):
                    if name in feed_inputs:
                        observed.append((name, feed_inputs[name]))
                return run(output_names, feed_inputs, *args, **kwargs)

            ev.run = run_recording
        for node in getattr(ev, "rt_nodes_", []):
            if type(node).__name__ != "OpFunction":  # a function body has its own names
                for attr in list(vars(node).values()):
                    if isinstance(attr, ReferenceEvaluator):
                        instrument(attr, True)
            node_run = node.run

            def node_recording(
                *args: Any, _run: Any = node_run, _node: Any = node, **kwargs: Any
            ) -> Any:
                outputs = _run(*args, **kwargs)
                for name, value in zip(_node.output, outputs):
                    if name:
                        observed.append((name, value))
                return outputs

            node.run = node_recording

    instrument(evaluator, False)

    def record(feeds: Dict[str, np.ndarray]) -> Tuple[List[Any], List[Tuple[str, Any]]]:
        del observed[:]
        outputs = evaluator.run(None, feeds)
        return list(outputs), list(observed)

    return record


OBSERVERS = {"ort": ort_observer, "reference": reference_observer}

#: The last case's reference evaluation, shared by every check that needs its values
#: (`reference`, both annotation checks, `annotations_builtin`'s own verdict): onnx's
#: reference evaluator is the slowest thing a worker runs on a real model, and each of
#: them ran it again. One case at a time: the values of a large model are not kept
#: past its checks. Keyed by the case's folder; a failure is kept and raised again.
_last: Dict[str, Any] = {"case": None, "recorder": None, "runs": {}}


def shared_recorder(case: str, model: Any) -> None:
    """Builds `case`'s reference evaluator once (raising again what building it raised)."""
    if _last["case"] != case:
        _last.update(case=case, recorder=None, runs={})
        try:
            _last["recorder"] = reference_recorder(model)
        except Exception as exc:
            _last["recorder"] = exc
    if isinstance(_last["recorder"], Exception):
        raise _last["recorder"]


def shared_reference(case: str, model: Any, index: int, feeds: Dict[str, np.ndarray]) -> Any:
    """(outputs, recorded values) of run `index` of `case`'s model in the reference
    evaluator, computed once per case and run (a model with the same nodes, as shape
    inference leaves them, gives the same values); its failure raised again."""
    shared_recorder(case, model)
    if index not in _last["runs"]:
        try:
            _last["runs"][index] = _last["recorder"](feeds)
        except Exception as exc:
            _last["runs"][index] = exc
    found = _last["runs"][index]
    if isinstance(found, Exception):
        raise found
    return found


def _failed(model: Any, feeds: Dict[str, np.ndarray], runtime: str, exc: Exception) -> RunVerdict:
    verdict = judge(model, feeds, [])
    message = "%s: %s" % (type(exc).__name__, " ".join(str(exc).split()))
    verdict.error = "%s run failed: %s" % (runtime, message[:1000])
    return verdict


def _observer(model: Any, runtime: str, case: Optional[str]) -> Callable[[int, Any], Any]:
    """(run index, feeds) -> the values observed; the reference evaluator's shared
    with the other checks of `case` when one is given."""
    if runtime == "reference" and case is not None:

        def shared(index: int, feeds: Dict[str, np.ndarray]) -> List[Tuple[str, Any]]:
            return shared_reference(case, model, index, feeds)[1]

        return shared
    built = OBSERVERS[runtime](model)

    def own(index: int, feeds: Dict[str, np.ndarray]) -> List[Tuple[str, Any]]:
        return built(feeds)

    return own


def check_runs(
    model: Any, runs: List[Dict[str, np.ndarray]], runtime: str, case: Optional[str] = None
) -> List[RunVerdict]:
    """Every run of one model with one runtime, built once, each run judged with a fresh
    β. A runtime failure is recorded, the inputs are still judged. `case`: the folder of
    the case whose model has these nodes, whose reference values are then shared."""
    try:
        observe = _observer(model, runtime, case)
    except Exception as exc:
        return [_failed(model, feeds, runtime, exc) for feeds in runs]
    verdicts = []
    for index, feeds in enumerate(runs):
        try:
            observed = observe(index, feeds)
        except Exception as exc:
            verdicts.append(_failed(model, feeds, runtime, exc))
            continue
        verdicts.append(judge(model, feeds, observed))
    return verdicts


def check_run(model: Any, feeds: Dict[str, np.ndarray], runtime: str = "ort") -> RunVerdict:
    """One run with a fresh β. A runtime failure is recorded, inputs are still judged."""
    return check_runs(model, [feeds], runtime)[0]
