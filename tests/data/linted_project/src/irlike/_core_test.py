"""Tests beside the code, as onnx-ir keeps most of its tests."""

import unittest

import onnx.helper
import parameterized

import irlike


class CountNodesTest(unittest.TestCase):
    @parameterized.parameterized.expand([(0,), (2,)])
    def test_count_nodes(self, n: int) -> None:
        nodes = [onnx.helper.make_node("Identity", ["x"], ["x"]) for _ in range(n)]
        model = onnx.helper.make_model(onnx.helper.make_graph(nodes, "g", [], []))
        self.assertEqual(irlike.count_nodes(model), n)
