"""A test that writes a module into the tree and imports it, as converters' suites do."""

import os
import sys
import tempfile
import unittest

import hypothesis


class GeneratedTest(unittest.TestCase):
    def test_a_written_module_imports(self) -> None:
        folder = tempfile.mkdtemp()
        with open(os.path.join(folder, "written_model_module.py"), "w") as f:
            f.write("VALUE = 1\n")
        sys.path.insert(0, folder)
        import written_model_module

        self.assertEqual(written_model_module.VALUE, 1)

    @hypothesis.given(hypothesis.strategies.integers())
    def test_integers(self, n: int) -> None:
        self.assertIsInstance(n, int)
