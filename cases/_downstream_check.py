"""The downstream-imports check: runs inside a cell (standard library, onnx,
onnxruntime, numpy only)."""

from __future__ import annotations

import importlib
import re
from importlib import metadata
from typing import Any

#: the packages whose downstream packages the check imports
UPSTREAM = ("onnx", "onnxruntime")


def _requires_upstream(dist: Any) -> bool:
    for requirement in dist.requires or []:
        name = re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0].lower()
        if name.replace("_", "-") in UPSTREAM and "extra ==" not in requirement:
            return True
    return False


def _modules(dist: Any) -> list[str]:
    top = dist.read_text("top_level.txt")
    if top:
        return [m.strip() for m in top.splitlines() if m.strip() and not m.startswith("_")]
    return [dist.metadata["Name"].replace("-", "_").lower()]


def check_downstream_imports(case: Any) -> str:
    """Every installed package that depends on onnx or onnxruntime (a converter such as
    onnxconverter-common or skl2onnx, put in the cell with --pkg or --with) imports
    with this cell's releases; `skip` when the cell has none."""
    from compat.cell.verdict import fail, one_line, skip

    found = sorted(
        {
            (d.metadata["Name"], d.version): _modules(d)
            for d in metadata.distributions()
            if d.metadata["Name"] and _requires_upstream(d)
        }.items()
    )
    if not found:
        raise skip("no package that depends on onnx or onnxruntime is installed in this cell")
    broken, fine = [], []
    for (name, version), modules in found:
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception as exc:
                broken.append(f"{name} {version}: import {module}: {one_line(exc)}")
                break
        else:
            fine.append(f"{name} {version}")
    if broken:
        raise fail("import", "; ".join(broken))
    return "imports: " + ", ".join(fine)
