"""The releases of a project's axes a scan reads (compat/corpus/scan.py): the `[tool.compat]`
that names them, and each axis's releases as listed there, or as last resolved into the
state directory for an axis that follows the index; the index itself is never asked.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from packaging.version import InvalidVersion, Version

from compat.plan.toml_values import read_compat_table

PACKAGES = ("onnx", "onnxruntime")


def config_file(given: Path | None = None) -> Path | None:
    """The `[tool.compat]` whose axes name the releases: `given`, else ./pyproject.toml when
    it has one, else the built-in one (this checkout's pyproject.toml), else none."""
    if given is not None:
        return given
    for candidate in (
        Path("pyproject.toml"),
        Path(__file__).resolve().parents[2] / "pyproject.toml",
    ):
        try:
            data = tomllib.loads(candidate.read_text())
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(data.get("tool"), dict) and "compat" in data["tool"]:
            return candidate
    return None


def axis_releases(config: Path | None) -> dict[str, tuple[str, ...]]:
    """Each package's releases on its axis in `config`: listed, or (an axis that follows
    the index, `versions = ">=1.15"`) as last resolved into the state directory; never
    asks the index. Only the axes are read: a scan takes no other key of the config."""
    if config is None:
        return {}
    table = read_compat_table(config)
    found: dict[str, tuple[str, ...]] = {}
    for package in PACKAGES:
        axis = table.get(package)
        versions = axis.get("versions") if isinstance(axis, dict) else None
        if isinstance(versions, str):  # a range that follows the index
            record = config.resolve().parent / ".compat" / "axes.json"
            try:
                recorded = json.loads(record.read_text())
                versions = recorded[f"{package} {versions.strip()}"]["versions"]
            except (OSError, ValueError, KeyError, TypeError):
                versions = []
        if isinstance(versions, list):
            found[package] = tuple(v for v in versions if isinstance(v, str) and _release(v))
    return found


def _release(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True
