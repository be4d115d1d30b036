"""Downstream imports: do the packages built on onnx import with this cell's onnx?

A converter pins nothing and breaks when onnx removes an API: onnx 1.19 removed
`onnx.mapping`, and onnxconverter-common, which imported it, failed at import (onnx
#7257). This family imports, in each cell, every installed package that depends on onnx
or onnxruntime — put there with `--pkg onnxconverter-common=1.14.0,1.16.0` or `--with
skl2onnx==1.19.1` — and records an import failure as the result; a cell with no such
package is a skip that says so.

Rare form: a downstream package imported under an onnx newer than it was written for
Common twin: the same package under the onnx it was released with
Shows: which converter imports with which onnx (needs `--pkg` or `--with`: else a skip)
"""

from __future__ import annotations

from pathlib import Path

from compat.core.case import Case, CustomCheck
from compat.corpus.make import stand_in

IMPORTS = CustomCheck(
    name="downstream_imports",
    file=str(Path(__file__).with_name("_downstream_check.py")),
    function="check_downstream_imports",
    package="onnx",
)


def cases() -> list[Case]:
    return [
        Case(
            id="downstream_imports.installed",
            description="every installed package that depends on onnx or onnxruntime imports",
            model=stand_in("downstream_imports"),  # the check does not read it
            builtin_checks=(),
            custom_checks=(IMPORTS,),
        )
    ]
