"""The record of what a cell really holds: its probe imports the stack in the cell and
runs a tiny model. A probe that did not end by itself (killed by a signal: the run was
stopped, Ctrl-C or a CI cancel) is no answer about the environment (`answered`), so it
is never kept in the environment's marker; a failure always says what the probe said,
or how it ended when it said nothing."""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
from pathlib import Path

from compat.core.install import InstallRequest
from compat.core.outcomes import CellRecord, CellState
from compat.core.versions import parse_version
from compat.execute import interrupt
from compat.execute.installer import run_command
from compat.plan.matrix import Cell
from compat.state import cellcode

#: How long an import probe may take.
PROBE_TIMEOUT = 300
#: How a probe that ended by a signal starts its detail.
KILLED = "the import probe was killed by "


def trim(text: str, head: int = 20, tail: int = 30) -> str:
    """The installer's or interpreter's message, with the middle of a long one elided."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    if len(lines) > head + tail:
        lines = [*lines[:head], f"[... {len(lines) - head - tail} lines ...]", *lines[-tail:]]
    return "\n".join(lines)


def pins(request: InstallRequest) -> list[tuple[str, str]]:
    """The exactly pinned (name, version) pairs of a cell's request."""
    return [(name.lower(), version) for name, version in request.exact()]


def broken(cell: Cell, state: CellState, message: str) -> CellRecord:
    """A cell that cannot run, with the message that says why."""
    return CellRecord(
        id=cell.id,
        onnx=cell.onnx,
        onnxruntime=cell.onnxruntime,
        state=state,
        detail=trim(message) or "(no message)",
        requirements=cell.requirements,
        python=cell.python,
    )


def _ended(code: int, output: str) -> str:
    """What a failed probe said; how it ended when it said nothing."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"{KILLED}{name}" + (f":\n{output}" if output.strip() else "")
    return output if output.strip() else f"the import probe exited {code} and printed nothing"


def answered(record: CellRecord) -> bool:
    """Whether a probe's record says something of the environment: not when the probe
    was killed, nor when the run was being stopped while it ran (a Ctrl-C reaches the
    probe too, which then fails with a KeyboardInterrupt)."""
    return not record.detail.startswith(KILLED) and not interrupt.STOP.is_set()


def probe(cell: Cell, python: Path, code: Path) -> CellRecord:
    """Imports the stack in the cell and runs a tiny model; import-error on failure."""
    pinned = dict(pins(cell.requirements))
    others = sorted(set(pinned) - {"onnx", "onnxruntime", "numpy", "protobuf"})
    # what the import leaves in TMPDIR goes with the folder (onnxruntime 1.29 and 1.30
    # write a telemetry session file and a debug log there)
    try:
        with tempfile.TemporaryDirectory(prefix="compat-probe-") as scratch:
            command = cellcode.command(python, "probe", *others)
            environ = cellcode.environ(code, Path(scratch))
            done = run_command(command, timeout=PROBE_TIMEOUT, env=environ, cwd=code)
    except subprocess.TimeoutExpired:
        return broken(cell, CellState.IMPORT_ERROR, f"import probe ran past {PROBE_TIMEOUT} s")
    if done.returncode != 0:
        said = _ended(done.returncode, done.stderr or done.stdout)
        return broken(cell, CellState.IMPORT_ERROR, said)
    info = json.loads(done.stdout.strip().splitlines()[-1])
    wrong = [
        f"asked for {name}=={want}, installed {info['packages'].get(name) or 'nothing'}"
        for name, want in pinned.items()
        if name in info["packages"]
        and parse_version(info["packages"][name] or "0", name) != parse_version(want, name)
    ]
    if wrong:  # never a silent substitution
        return broken(cell, CellState.INSTALL_ERROR, "; ".join(wrong))
    return CellRecord(
        id=cell.id,
        onnx=cell.onnx,
        onnxruntime=cell.onnxruntime,
        state=CellState.READY,
        packages=info["packages"],
        python=info["python"],
        platform=info["platform"],
        requirements=cell.requirements,
        limits=tuple(info.get("limits", ())),
        installed=info.get("installed", {}),
    )
