"""Adopting onnx-compat in a project (`onnx-compat init`) and what it reads there:
the declared ranges that "claims vs reality" sets against the results."""

from __future__ import annotations

from compat.adopt.declared import claims_line, declared_ranges
from compat.adopt.init import InitOptions, cmd_init, init

__all__ = ["InitOptions", "claims_line", "cmd_init", "declared_ranges", "init"]
