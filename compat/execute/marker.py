"""An environment's marker, compat-env.json, and the fingerprint in it: what the
environment held when it was built (its distributions, the size of each compiled file
they installed), compared before each reuse, so an environment changed since (a
release swapped or removed, a compiled file damaged) is rebuilt, not trusted. Apart
from compat/execute/envs.py, which decides when to build or reuse, because this is
the part that reads what lies in the environment's folder. A decision made without
an environment (no wheel, no solution) is kept there too, for a while (`remember`,
`decided`).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import time
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from compat.core.files import replace_text
from compat.core.outcomes import CellRecord, CellState

#: the file in each environment's folder that says what was built there
MARKER = "compat-env.json"


def read_marker(marker: Path) -> dict[str, Any] | None:
    """The marker as written, or None when it is missing, unreadable or not an object."""
    try:
        saved = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def saved_record(saved: dict[str, Any]) -> CellRecord | None:
    """The probed record the marker holds, or None when it holds no valid one."""
    try:
        return CellRecord.from_dict(saved["record"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


#: How long a decision made without an environment stands before the index is asked
#: again, in hours: no wheel of a release for a Python (one may come for a new Python),
#: and no solution for a cell's requirements (uv's resolver said why; a new release of
#: an unpinned requirement may solve it). Any other install error is tried every run.
DECISION_HOURS = {CellState.NO_WHEEL: 7 * 24, CellState.INSTALL_ERROR: 24}


def remember(
    directory: Path,
    marker: Path,
    identity: dict[str, object],
    record: CellRecord,
    project: str | None = None,
) -> None:
    """Keeps a decision made without an environment (no wheel, no solution) where the
    environment would be, with when it was made and the project's build (`project`,
    its sha256) it was made for."""
    saved = {"identity": identity, "record": record.serialize(), "decided": time.time()}
    saved["project"] = project
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        replace_text(marker, json.dumps(saved, indent=1))


def decided(saved: dict[str, Any], project: str | None) -> CellRecord | None:
    """The record of a remembered decision that still stands for this build of the
    project (DECISION_HOURS), or None."""
    record = saved_record(saved)
    when = saved.get("decided")
    if record is None or record.state not in DECISION_HOURS or not isinstance(when, float):
        return None
    if record.state is CellState.INSTALL_ERROR and saved.get("project") != project:
        return None  # the project's requirements may have changed: asked again
    return record if time.time() - when < DECISION_HOURS[record.state] * 3600 else None


def _site_packages(directory: Path) -> list[Path]:
    return sorted(directory.glob("lib/python*/site-packages")) + sorted(
        directory.glob("Lib/site-packages")
    )


def _compiled(name: str) -> bool:
    """An extension module or shared library: what a deletion or a swap breaks first,
    and a few dozen files per environment (every file would be 6,000 stats)."""
    return name.endswith((".so", ".pyd", ".dylib", ".dll")) or ".so." in name


def _distributions(directory: Path) -> dict[str, int]:
    """Each installed distribution's folder (`onnxruntime-1.24.4.dist-info`: name and
    version) and the size of its RECORD (-1 without one)."""
    dists: dict[str, int] = {}
    for site in _site_packages(directory):
        with os.scandir(site) as entries:
            for entry in entries:
                if entry.name.endswith((".dist-info", ".egg-info")):
                    try:
                        size = (Path(entry.path) / "RECORD").stat().st_size
                    except OSError:
                        size = -1
                    dists[Path(entry.path).relative_to(directory).as_posix()] = size
    return dists


def fingerprint(directory: Path) -> dict[str, Any]:
    """What an environment holds, recorded when it is built and compared before each reuse:
    its distributions (name, version, RECORD's size) and the size of every compiled file
    they installed. Sizes, not times: a CI cache restores files with new times."""
    files: dict[str, int] = {}
    dists = _distributions(directory)
    for folder in dists:
        site = (directory / folder).parent
        try:
            lines = (directory / folder / "RECORD").read_text(errors="replace").splitlines()
        except OSError:
            continue
        for row in csv.reader(lines):
            if row and _compiled(row[0]) and not row[0].startswith(("..", "/")):
                path = site / row[0]
                try:
                    files[path.relative_to(directory).as_posix()] = path.stat().st_size
                except OSError:  # listed but never installed: nothing to compare later
                    continue
    return {"dists": dists, "files": files}


def changes(directory: Path, recorded: object) -> str:
    """How the environment differs from its recorded fingerprint, in a few words; "" when
    it does not (a listing and a few dozen stats: 27 environments in milliseconds)."""
    if not isinstance(recorded, dict):
        return f"its {MARKER} holds no valid fingerprint"
    dists = recorded.get("dists")
    files = recorded.get("files")
    if not isinstance(dists, dict) or not isinstance(files, dict):
        return f"its {MARKER} holds no valid fingerprint"
    now = _distributions(directory)
    found: list[str] = []
    before = {_dist_name(k): _dist_version(k) for k in dists if k not in now}
    after = {_dist_name(k): _dist_version(k) for k in now if k not in dists}
    # a swapped release first, the dependencies it brought or dropped after it
    found += [f"{n} {before[n]} is now {after[n]}" for n in sorted(before.keys() & after.keys())]
    found += [f"{n} {before[n]} was removed" for n in sorted(before.keys() - after.keys())]
    found += [f"{n} {after[n]} was added" for n in sorted(after.keys() - before.keys())]
    found += [
        f"{_dist_name(k)}'s files changed"
        for k, size in now.items()
        if k in dists and dists[k] != size
    ]
    for name, size in files.items():
        try:
            actual = (directory / name).stat().st_size
        except OSError:
            found.append(f"{Path(name).name} is missing")
            continue
        if actual != size:
            found.append(f"{Path(name).name} has changed size")
    if not found:
        return ""
    more = f" (+{len(found) - 2} more)" if len(found) > 2 else ""
    return "; ".join(found[:2]) + more


def _dist_name(folder: str) -> str:
    return canonicalize_name(Path(folder).name.split("-", 1)[0])


def _dist_version(folder: str) -> str:
    stem = Path(folder).name.rsplit(".", 1)[0]  # onnxruntime-1.24.4.dist-info
    return stem.split("-", 1)[1] if "-" in stem else "?"
