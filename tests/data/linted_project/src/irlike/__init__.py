"""A tiny IR over onnx: what the adoption test needs of a library, nothing more."""

__all__ = ["count_nodes"]

from irlike._core import count_nodes
