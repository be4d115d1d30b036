"""A case directory as the checks see it: model, inputs, oracle outputs, expectations.

A case directory holds ``model.onnx``, ``data.npz`` (``in.NAME`` inputs and
``out.NAME`` expected outputs, ``runK.NAME`` more runs) and ``case.json`` (the
case's expectations); backend-test cases carry ``data/input_J.pb`` files instead.
"""

from __future__ import annotations

import json
import os
from typing import Optional

from compat.cell.protocol import CaseSpec, Task
from compat.cell.session import open_session
from compat.cell.verdict import Phase


class CaseData:
    """Lazily loaded files of one case directory, shared by all its checks."""

    def __init__(self, case_dir: str) -> None:
        self.case_dir = case_dir
        with open(os.path.join(case_dir, "case.json")) as f:
            self.spec: CaseSpec = json.load(f)
        #: what the host asks of this run (a command's log file, its timeout): the loop's
        self.task: Optional[Task] = None
        self.model_path = os.path.join(case_dir, "model.onnx")
        self._model = None
        self._data = None
        self._ort_outputs = None

    @property
    def model(self):
        if self._model is None:
            import onnx

            with Phase("load"):
                self._model = onnx.load(self.model_path)
        return self._model

    def _arrays(self):
        if self._data is None:
            if self.spec.get("encoding") == "pb":
                with Phase("load"):
                    self._data = load_pb_data(self.case_dir, self.model)
            else:
                import numpy as np

                with Phase("load"), np.load(os.path.join(self.case_dir, "data.npz")) as z:
                    # strings travel as fixed-width unicode; runtimes use object arrays
                    self._data = {
                        name: z[name].astype(object) if z[name].dtype.kind == "U" else z[name]
                        for name in z.files
                    }
        return self._data

    @property
    def inputs(self):
        return {k[3:]: v for k, v in self._arrays().items() if k.startswith("in.")}

    @property
    def expected(self):
        """The oracle's outputs: the case's numpy oracle, or onnxruntime unoptimized."""
        if self.spec.get("oracle") == "onnxruntime":
            if self._ort_outputs is None:
                session = open_session(self, "disabled")
                # the oracle is onnxruntime's run at level disabled: a failure there is
                # that run's, as a known bug's `phase = ("run",)` names it
                with Phase("run@disabled"):
                    names = [o.name for o in session.get_outputs()]
                    self._ort_outputs = dict(zip(names, session.run(None, self.inputs)))
            return self._ort_outputs
        return {k[4:]: v for k, v in self._arrays().items() if k.startswith("out.")}

    @property
    def runs(self):
        """The inputs of every run: `in.NAME` is run 0, `runK.NAME` run K."""
        runs = {0: self.inputs}
        for key, value in self._arrays().items():
            if key.startswith("run"):
                index, name = key[3:].split(".", 1)
                runs.setdefault(int(index), {})[name] = value
        return [runs[k] for k in sorted(runs)]


def load_pb_data(case_dir, model):
    """input_J.pb / output_J.pb, read as the model types each value (onnx's runner does so)."""
    import onnx
    from onnx import numpy_helper

    def decode(path, type_proto):
        with open(path, "rb") as f:
            content = f.read()
        kind = type_proto.WhichOneof("value")
        if kind == "sequence_type":
            proto = onnx.SequenceProto()
            proto.ParseFromString(content)
            return numpy_helper.to_list(proto)
        if kind == "optional_type":
            proto = onnx.OptionalProto()
            proto.ParseFromString(content)
            return numpy_helper.to_optional(proto)
        proto = onnx.TensorProto()
        proto.ParseFromString(content)
        return numpy_helper.to_array(proto)

    data = {}
    for prefix, key, values in (
        ("input", "in.", model.graph.input),
        ("output", "out.", model.graph.output),
    ):
        for j, info in enumerate(values):
            path = os.path.join(case_dir, "data", "%s_%d.pb" % (prefix, j))
            if os.path.exists(path):
                data[key + info.name] = decode(path, info.type)
    return data
