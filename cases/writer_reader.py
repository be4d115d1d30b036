"""Writer × reader: does a cell's onnxruntime load what the cell's onnx writes by default?

The model is written inside the cell by that cell's onnx with `helper.make_model`'s
defaults (its IR version, its newest opset) — what an exporter that sets neither
produces — and loaded and run by that cell's onnxruntime. onnx 1.16 writes IR 10,
which onnxruntime 1.17 cannot read (onnxruntime #20559); onnx-weekly builds write an
IR and opset no released onnxruntime reads yet (onnxruntime #23602). A refusal past the
runtime's probed limits is a skip naming the limit; a refusal within them, or a wrong
Relu, is a failure. `--cross` gives the whole table; the docs page `writer_reader.md`
reads it from a run.

Rare form: a model stamped with the writer's newest IR version and opset (the default)
Common twin: the support_limits family's models, stamped by hand
Shows: which onnx release writes models which onnxruntime release can load
"""

from __future__ import annotations

from pathlib import Path

from compat.core.case import Case, CustomCheck
from compat.corpus.make import stand_in

WRITES_AND_READS = CustomCheck(
    name="default_model_loads",
    file=str(Path(__file__).with_name("_writer_reader_check.py")),
    function="check_default_model",
    package="both",  # onnx writes, onnxruntime reads: keyed by and drawn on both axes
)


def cases() -> list[Case]:
    # the case's own model is a stand-in: the check writes its model in the cell
    return [
        Case(
            id="writer_reader.default_model",
            description="Relu written with helper.make_model's defaults in the cell, then "
            "loaded by the cell's onnxruntime",
            model=stand_in("writer_reader"),  # the check does not read it
            builtin_checks=(),
            custom_checks=(WRITES_AND_READS,),
        )
    ]
