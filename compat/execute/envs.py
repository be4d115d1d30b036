"""Creates (or reuses) one isolated virtual environment per cell, with uv: when to
build and when to reuse, and the record of what a cell really holds (its probe). uv's
commands and messages live in compat/execute/installer.py, the marker and fingerprint
an environment is checked against before reuse in compat/execute/marker.py."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from filelock import FileLock
from packaging.utils import canonicalize_name

from compat.core.files import replace_text, warn
from compat.core.install import InstallRequest
from compat.core.outcomes import CellRecord, CellState
from compat.execute.installer import (
    INSTALL_TIMEOUT,
    find_uv,
    install_commands,
    resolver_reason,
    run_command,
)
from compat.execute.marker import (
    DECISION_HOURS,
    MARKER,
    changes,
    decided,
    fingerprint,
    read_marker,
    remember,
    saved_record,
)
from compat.execute.probe import answered, broken, probe
from compat.execute.project import Built, build
from compat.plan.index import built_from_source, missing_wheel
from compat.plan.matrix import Cell
from compat.plan.pythons import python_version
from compat.state import cellcode


@dataclass(frozen=True)
class Environment:
    """A cell's environment: its interpreter and what was really installed."""

    record: CellRecord
    python: Path
    code: Path  # the staged in-cell code, the cell processes' PYTHONPATH


def env_python(directory: Path) -> Path:
    return directory / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _identity(cell: Cell, base_python: str, root: Path) -> dict[str, object]:
    """What makes an environment reusable: same pins (the project's dependencies as its
    wheel declares them), same base interpreter. The project's own code is not in it: a
    new build of the project is installed into the environment as it is."""
    return {
        "requirements": expanded(cell.requirements, root, base_python).serialize(),
        "base_python": base_interpreter(base_python),
    }


def _project(cell: Cell, root: Path, base_python: str) -> Built | None:
    """The project's wheel (built once per run) when the cell installs the project."""
    project = cell.requirements.project
    return None if project is None else build(project.path, root.parent, base_python)


def expanded(request: InstallRequest, root: Path, base_python: str) -> InstallRequest:
    """The request with its project replaced by the wheel's own dependencies for its
    extras, as pins after the others (uv resolves them per cell, like every pin)."""
    project = request.project
    if project is None:
        return request
    wheel = build(project.path, root.parent, base_python)
    return replace(request, project=None).with_pins(wheel.requirements(project.extras))


def base_interpreter(python: str) -> str:
    """The real interpreter behind `python`: a venv's (nox's session, a user's) resolves to
    the one it was made from, as uv does when it makes a cell from it. So `nox -s matrix`
    and `python -m compat matrix` share environments instead of rebuilding them."""
    path = Path(shutil.which(python) or python)
    config = path.parent.parent / "pyvenv.cfg"
    if config.is_file():
        values = dict(
            (key.strip(), value.strip())
            for key, _, value in (line.partition("=") for line in config.read_text().splitlines())
        )
        home = Path(values.get("home", ""))
        minor = ".".join(values.get("version_info", values.get("version", "")).split(".")[:2])
        for name in (f"python{minor}", "python3", "python"):
            if (home / name).exists():
                return str((home / name).resolve())
    return str(path.resolve())


def ensure_env(cell: Cell, root: Path, base_python: str = sys.executable) -> Environment:
    """Returns the cell's environment, creating it only when its pins changed.

    Never raises for a broken cell: install and import failures become the
    record's state, carrying uv's or the interpreter's own message. Runs that
    share a state directory take turns per environment: a second run waits for
    the environment the first is building, then uses it.
    """
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(root / f".{cell.env_name}.lock"):
        return (
            _reuse(cell, root, base_python)
            or _known_decision(cell, root, base_python)
            or _no_wheel(cell, root, base_python)
            or _build(cell, root, base_python)
        )


def _no_wheel(cell: Cell, root: Path, base_python: str) -> Environment | None:
    """A cell the index has no wheel for (compat/plan/index.py `missing_wheel`): its
    state, decided before anything is built; None when every pin has a wheel."""
    reason = missing_wheel(cell.requirements, cell.python or python_version(base_python))
    if not reason:
        return None
    directory, python, code, marker, identity, _ = _place(cell, root, base_python)
    record = broken(cell, CellState.NO_WHEEL, reason)
    remember(directory, marker, identity, record)  # a rerun asks the index nothing
    return Environment(record, python, code)


def _known_decision(cell: Cell, root: Path, base_python: str) -> Environment | None:
    """A no-wheel or no-solution decision that still stands (compat/execute/marker.py
    `decided`) for the same pins and the same build of the project, or None."""
    _, python, code, marker, identity, project = _place(cell, root, base_python)
    saved = read_marker(marker) if marker.is_file() else None
    if not saved or not _same(saved.get("identity"), identity):
        return None
    record = decided(saved, project.sha256 if project else None)
    return None if record is None else Environment(replace(record, id=cell.id), python, code)


def existing_env(cell: Cell, root: Path, base_python: str = sys.executable) -> Environment | None:
    """The cell's environment when it is built already with the same pins, else None
    (nothing is built: a run starts checks in these while it builds the others)."""
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(root / f".{cell.env_name}.lock"):
        return _reuse(cell, root, base_python) or _known_decision(cell, root, base_python)


def _same(saved: object, identity: dict[str, object]) -> bool:
    """A marker written with the interpreter path as given (older onnx-compat) still
    matches when it resolves to the same base interpreter."""
    if not isinstance(saved, dict):
        return False
    base = saved.get("base_python")
    return {**saved, "base_python": base_interpreter(str(base)) if base else base} == identity


def _place(
    cell: Cell, root: Path, base_python: str
) -> tuple[Path, Path, Path, Path, dict[str, object], Built | None]:
    """Where a cell's environment lives and what makes it reusable: its folder, its
    interpreter, the staged cell code, its marker, its identity, the project's build."""
    directory = root / cell.env_name
    identity = _identity(cell, base_python, root)
    project = _project(cell, root, base_python)
    code = cellcode.stage(root.parent / "code")
    return directory, env_python(directory), code, directory / MARKER, identity, project


def _reuse(cell: Cell, root: Path, base_python: str) -> Environment | None:
    directory, python, code, marker, identity, project = _place(cell, root, base_python)
    if not (marker.is_file() and python.exists()):
        return None
    saved = read_marker(marker)
    if saved is None:
        _damaged(cell, marker, f"its {MARKER} is unreadable")
        return None
    if not _same(saved.get("identity"), identity):
        return None  # its pins changed: built again, as it should be
    record = saved_record(saved)
    if record is None:
        _damaged(cell, marker, f"its {MARKER} holds no valid record")
        return None
    if "fingerprint" not in saved:  # built by an older onnx-compat: adopted if it probes the same
        again = probe(cell, python, code)
        if (again.state, again.packages) != (record.state, record.packages):
            why = f"it probes as {_versions(again)}, not {_versions(record)}"
            _damaged(cell, marker, why)
            return None
        saved.update(record=again.serialize(), fingerprint=fingerprint(directory))
        record = again
        replace_text(marker, json.dumps(saved, indent=1))
    changed = changes(directory, saved["fingerprint"])
    if changed:
        _damaged(cell, marker, changed)
        return None
    old = record.state is CellState.READY and not (record.limits and record.installed)
    if old or record.state is CellState.IMPORT_ERROR:
        # probed by an older onnx-compat, or broken by what it imported: a failed import
        # is asked again each run (an interrupted first run, a stalled disk), never kept
        record = probe(cell, python, code)
        if not answered(record):
            return Environment(replace(record, id=cell.id), python, code)
        saved["record"] = record.serialize()
        replace_text(marker, json.dumps(saved, indent=1))
    stale = project and saved.get("project") != project.sha256
    if project and stale and record.state is CellState.READY:
        record = _install_project(cell, python, record, project)
        saved.update(record=record.serialize(), project=project.sha256)
        saved["fingerprint"] = fingerprint(directory)  # the project's own files changed
        replace_text(marker, json.dumps(saved, indent=1))
    return Environment(replace(record, id=cell.id), python, code)  # as this run names it


def _versions(record: CellRecord) -> str:
    packages = ", ".join(f"{k} {v}" for k, v in sorted(record.packages.items()))
    return f"{record.state.value}" + (f" ({packages})" if packages else "")


def _damaged(cell: Cell, marker: Path, why: str) -> None:
    """Forgets an environment that differs from what was built: it is built again (once:
    without its marker, the next look finds it not built)."""
    warn(f"environment {cell.id} differs from what was built ({why}): rebuilding it")
    with contextlib.suppress(OSError):  # then the build fails, saying why
        marker.unlink(missing_ok=True)


def _install_project(cell: Cell, python: Path, record: CellRecord, project: Built) -> CellRecord:
    """Installs (again) the project's wheel alone: its dependencies are in already."""
    command = [
        find_uv(),
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--reinstall-package",
        project.name,
        "--python",
        str(python),
        str(project.wheel),
    ]
    done = run_command(command, timeout=INSTALL_TIMEOUT)
    if done.returncode != 0:
        message = f"installing {project.wheel.name}: {done.stderr or done.stdout}"
        return broken(cell, CellState.INSTALL_ERROR, message)
    # the stack is as probed; only the project changed (a probe per cell would cost 1 s)
    installed = {**record.installed, canonicalize_name(project.name): project.version}
    return replace(record, installed=installed)


def _build(cell: Cell, root: Path, base_python: str) -> Environment:
    directory, python, code, marker, identity, project = _place(cell, root, base_python)
    if directory.exists():
        shutil.rmtree(directory)
    uv = find_uv()
    request = expanded(cell.requirements, root, base_python)
    wheel = project.wheel if project is not None else None
    from_source = built_from_source(request)  # sdists alone on the index: uv builds them
    steps = install_commands(uv, base_python, directory, python, request, wheel, from_source)
    for command in steps:
        try:
            done = run_command(command, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            message = f"`{' '.join(command[1:3])}` ran past {INSTALL_TIMEOUT} s"
            return Environment(broken(cell, CellState.INSTALL_ERROR, message), python, code)
        if done.returncode != 0:
            message = done.stderr or done.stdout
            reason = resolver_reason(message, cell.requirements.pins)
            message = f"{reason}\n\n{message}" if reason else message
            record = broken(cell, CellState.INSTALL_ERROR, message)
            shutil.rmtree(directory, ignore_errors=True)  # else retried next run: transient?
            if reason:  # the resolver's answer: the same until the index changes
                said = f"{message}\n\n(remembered for {DECISION_HOURS[record.state]} h)"
                known = replace(record, detail=said)
                remember(directory, marker, identity, known, project.sha256 if project else None)
            return Environment(record, python, code)
    record = probe(cell, python, code)
    if not answered(record):  # stopped while it probed: nothing recorded, built again
        return Environment(record, python, code)
    saved: dict[str, object] = {"identity": identity, "record": record.serialize()}
    if project is not None:
        saved["project"] = project.sha256
    saved["fingerprint"] = fingerprint(directory)
    replace_text(marker, json.dumps(saved, indent=1))
    return Environment(record, python, code)
