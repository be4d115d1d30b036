"""Case-specific check of the optimizer_numerics family, run inside each cell's worker.

Imports only the standard library, onnxruntime and the in-cell package (compat.cell,
staged into every cell), and stays valid on Python 3.9.
"""

from __future__ import annotations

from typing import Any, cast

from compat.cell.blame import blame
from compat.cell.compare import largest_difference
from compat.cell.session import ORT_LEVELS, open_session


def levels_against_disabled(case: Any) -> str:
    """Every optimization level computes what `disabled` computes, bit for bit, or the
    graph rewrite responsible is found: a level that differs while no optimizer explains
    it is a failure. The detail says, level by level, how far apart and who is
    responsible: what a user comparing levels (or comparing with a drop-in model's
    `disabled` oracle) must be told."""
    outputs = {}
    for level in ORT_LEVELS:
        session = cast(Any, open_session)(case, level)
        names = [o.name for o in session.get_outputs()]
        outputs[level] = (names, session.run(None, case.inputs))
    names, base = outputs["disabled"]
    expected = {name: base[i] for i, name in enumerate(names)}
    said = []
    for level in ORT_LEVELS[1:]:
        apart = cast(Any, largest_difference)(*outputs[level], expected)
        if apart is None:
            said.append(f"{level}: identical")
            continue
        why = cast(Any, blame)(case, level, expected, (0.0, 0.0, {}), "level disabled")
        if "is responsible" not in why and "are responsible" not in why:
            raise AssertionError(f"{level} differs from disabled by up to {apart[0]:.3g}: {why}")
        said.append(f"{level}: up to {apart[0]:.3g} apart from disabled; {why}")
    return "; ".join(said)
