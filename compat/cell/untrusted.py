"""Models are untrusted: every external-data location is checked, then the data inlined.

A model file may keep tensor data in other files ("external data": a `location`
relative to the model's folder, an `offset`, a `length`). The old onnx and
onnxruntime releases of the matrix follow any location they are given (absolute
paths, `../`, symlinks: CVE-2024-27318, CVE-2024-5187), and onnx's own loader,
even today, checks initializers, attributes and subgraphs but not sparse
initializers or function bodies. So nothing here relies on the installed onnx:
every tensor that can hold external data (initializers, sparse initializers'
values and indices, tensor attributes, subgraphs of If/Loop/Scan at any depth,
local functions, training graphs) is found in the proto itself, its location
checked with the newest rules (relative, no `..` escape, resolving — symlinks
followed — to a regular file inside the model's folder), and its bytes read here
and put into the model. A model that leaves here has no external data, so no cell
opens any file beside it.

Used by the host (compat/corpus/dropin.py: matrix, triage, variants) and by the
annotations CLI, which also runs inside cells: stdlib and onnx only, Python 3.9.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator, List, Tuple

import onnx

#: where a tensor sits in the model, for the message ("sparse initializer 'w' (its values)")
Found = Tuple[str, onnx.TensorProto]


class UntrustedData(ValueError):
    """A model's external data the model may not read: one line naming the model
    file, the tensor and the location."""


def _attribute_tensors(attribute: onnx.AttributeProto, node: str) -> Iterator[Found]:
    here = "attribute %r of node %r" % (attribute.name, node)
    if attribute.HasField("t"):
        yield "tensor %r in %s" % (attribute.t.name or attribute.name, here), attribute.t
    for tensor in attribute.tensors:
        yield "tensor %r in %s" % (tensor.name or attribute.name, here), tensor
    sparse = [attribute.sparse_tensor] if attribute.HasField("sparse_tensor") else []
    for item in [*sparse, *attribute.sparse_tensors]:
        name = item.values.name or attribute.name
        yield "sparse tensor %r (its values) in %s" % (name, here), item.values
        yield "sparse tensor %r (its indices) in %s" % (name, here), item.indices
    graphs = [attribute.g] if attribute.HasField("g") else []
    for graph in [*graphs, *attribute.graphs]:
        for where, tensor in _graph_tensors(graph):
            yield "%s in subgraph %r of node %r" % (where, attribute.name, node), tensor


def _node_tensors(nodes: List[onnx.NodeProto]) -> Iterator[Found]:
    for node in nodes:
        for attribute in node.attribute:
            yield from _attribute_tensors(attribute, node.name or node.op_type)


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[Found]:
    for tensor in graph.initializer:
        yield "initializer %r" % tensor.name, tensor
    for sparse in graph.sparse_initializer:
        yield "sparse initializer %r (its values)" % sparse.values.name, sparse.values
        yield "sparse initializer %r (its indices)" % sparse.values.name, sparse.indices
    yield from _node_tensors(list(graph.node))


def model_tensors(model: onnx.ModelProto) -> Iterator[Found]:
    """Every tensor of the model that could keep its data in another file, with where it is."""
    yield from _graph_tensors(model.graph)
    for function in model.functions:
        for where, tensor in _node_tensors(list(function.node)):
            yield "%s in function %r" % (where, function.name), tensor
    for index, training in enumerate(model.training_info):
        for kind in ("initialization", "algorithm"):
            for where, tensor in _graph_tensors(getattr(training, kind)):
                yield "%s in training_info[%d].%s" % (where, index, kind), tensor


def _external(tensor: onnx.TensorProto) -> bool:
    # a location under DEFAULT is ignored by the runtimes, but there is no reason to keep it
    return tensor.data_location == onnx.TensorProto.EXTERNAL or len(tensor.external_data) > 0


def _resolve(location: str, folder: Path) -> Tuple[Path, str]:
    """(the file, "") for a location the newest rules accept, else (_, why not)."""
    if not location:
        return folder, "no location is given"
    if "\0" in location:
        return folder, "it is not a file name (a NUL byte)"
    if location.startswith(("/", "\\")) or os.path.isabs(location):
        return folder, "an absolute path"
    if os.path.normpath(location).split(os.sep)[0] == "..":
        return folder, "it climbs out of the model's folder (..)"
    path = (folder / location).resolve()
    if path != folder and folder not in path.parents:
        return path, "a symlink out of the model's folder, to %s" % path
    try:
        mode = path.stat().st_mode
    except OSError:
        return path, "no such file in the model's folder"
    if not stat.S_ISREG(mode):
        return path, "not a regular file"
    return path, ""


def _entries(tensor: onnx.TensorProto) -> Tuple[str, int, int]:
    """(location, offset, length), length -1 for "to the end"; ValueError when garbled."""
    entries = {entry.key: entry.value for entry in tensor.external_data}
    offset = entries.get("offset", "0")
    length = entries.get("length", "-1")
    if not offset.isdigit() or not (length.isdigit() or length == "-1"):
        raise ValueError("offset %r, length %r are not byte counts" % (offset, length))
    return entries.get("location", ""), int(offset), int(length)


def inline_external_data(model: onnx.ModelProto, model_path: str) -> None:
    """Checks every external-data location of `model` (loaded from `model_path` without
    its external data) and reads the data into the model, so it keeps none.

    Raises:
        UntrustedData: the first location refused, in one line.
    """
    folder = Path(os.path.abspath(model_path)).parent.resolve()
    for where, tensor in model_tensors(model):
        if not _external(tensor):
            continue
        location = ""
        data = b""
        try:
            location, offset, length = _entries(tensor)
            path, why = _resolve(location, folder)
            if not why:
                with open(str(path), "rb") as file:
                    size = os.fstat(file.fileno()).st_size
                    end = size if length < 0 else offset + length
                    if end > size:
                        why = "bytes %d to %d asked for, the file has %d" % (offset, end, size)
                    else:
                        file.seek(offset)
                        data = file.read(end - offset)
        except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: a symlink loop
            why = str(exc)
        if why:
            raise UntrustedData(
                "%s: %s keeps its data in %r: %s; a model's external data must be a "
                "regular file inside its folder (%s), so the model is refused"
                % (model_path, where, location, why, folder)
            )
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            tensor.raw_data = data
        tensor.data_location = onnx.TensorProto.DEFAULT
        del tensor.external_data[:]


def load_untrusted(path: str) -> onnx.ModelProto:
    """The model at `path` with its external data checked and inlined (see above).

    Raises:
        UntrustedData: a location refused; the parsing errors of `onnx.load` pass through.
    """
    model = onnx.load(path, load_external_data=False)
    inline_external_data(model, path)
    return model
