"""What every rewrite of the catalogue (compat/corpus/rewrites.py) shares: the result it
returns, `Applied`, and the few model helpers each kind of rewrite uses. Apart from the
rewrites themselves so that each kind (compat/corpus/rewrite_nodes.py,
compat/corpus/rewrite_declarations.py) stands on it without importing the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx


@dataclass(frozen=True)
class Applied:
    """A rewrite's result: the rewritten copy, and what in it was rewritten."""

    model: onnx.ModelProto
    where: tuple[str, ...]  # the nodes or values rewritten


def copied(model: onnx.ModelProto) -> onnx.ModelProto:
    """A deep copy: a rewrite never changes the model it was given."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def label(node: onnx.NodeProto, index: int) -> str:
    """How a rewritten node is named in `Applied.where`: its name, else `OpType#index`."""
    return node.name or f"{node.op_type}#{index}"


def top_opset(model: onnx.ModelProto) -> int:
    """The model's default-domain opset (0 when it imports none)."""
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
