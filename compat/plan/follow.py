"""Axes that follow the package index: `versions = ">=1.15"` in `[tool.compat.onnx]`
(or onnxruntime) becomes one release per minor version, its newest patch with a wheel
for this Python — the rule the default lists follow by hand — resolved when a plan is
made, so tomorrow's release is in tomorrow's run. Each resolution is recorded in the
state directory (`axes.json`) and in matrix.json; `--offline` plans from the recorded
one, reproducing an earlier plan exactly. And `--onnx …,weekly`: the newest onnx-weekly
build, resolved the same way."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from packaging.version import Version

from compat.core.errors import CompatError, UsageError
from compat.core.versions import in_range
from compat.plan.config import Axis, Config
from compat.plan.index import releases
from compat.plan.matrix import parse_version_list

RECORD = "axes.json"


def newest_per_minor(versions: list[str]) -> tuple[str, ...]:
    """The newest release of each (major, minor), pre-releases aside, in order."""
    best: dict[tuple[int, int], Version] = {}
    for text in versions:
        version = Version(text)
        if version.is_prerelease or version.is_devrelease:
            continue
        key = (version.major, version.minor)
        if key not in best or version > best[key]:
            best[key] = version
    return tuple(str(best[k]) for k in sorted(best))


def _resolve(axis: Axis, recorded: dict[str, dict[str, object]], offline: bool) -> Axis:
    key = f"{axis.package} {axis.follows}"
    if not offline:
        try:
            listed = releases(axis.package, own=axis.index)  # with the axis's own indexes
            found = [v for v in listed if in_range(v, axis.follows)]
        except CompatError as exc:
            if key not in recorded:
                raise UsageError(f"{exc}; no earlier resolution of {key} to fall back on") from None
            print(
                f"onnx-compat: {exc}; using the resolution of {key} recorded "
                f"{recorded[key].get('at', '?')}"
            )
        else:
            versions = newest_per_minor(found)
            if not versions:
                raise UsageError(f"{key}: no release on the package index matches")
            at = datetime.now(UTC).isoformat(timespec="seconds")
            recorded[key] = {"versions": list(versions), "at": at}
    if key not in recorded:
        raise UsageError(f"--offline: no recorded resolution of {key}; run once online")
    return replace(axis, versions=tuple(str(v) for v in recorded[key]["versions"]))  # type: ignore[attr-defined]


def follow(config: Config, state: Path, offline: bool = False) -> tuple[Config, dict[str, object]]:
    """The config with every range axis resolved, and what was resolved (for the run's
    metadata); a config of lists, or one resolved already, comes back as it is."""
    onnx = config.onnx
    ort = config.onnxruntime
    if any(a.follows and not a.versions for a in (onnx, ort)):
        path = state / RECORD
        recorded: dict[str, dict[str, object]] = (
            json.loads(path.read_text()) if path.exists() else {}
        )
        onnx, ort = (
            _resolve(a, recorded, offline) if a.follows and not a.versions else a
            for a in (onnx, ort)
        )
        if not offline:
            state.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(recorded, indent=1, sort_keys=True))
    said: dict[str, object] = {
        a.package: {"range": a.follows, "versions": list(a.versions)}
        for a in (onnx, ort)
        if a.follows
    }
    return replace(config, onnx=onnx, onnxruntime=ort), said


#: `--onnx …,weekly`: the newest build of onnx's preview package, installed under its
#: own name and shown with its real version.
PREVIEWS = {"weekly": "onnx-weekly"}


def previews(text: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """The onnx axis of `--onnx`, each preview name resolved from the package index to
    its newest release; returns (releases, {release: distribution} of the previews)."""
    names = [v.strip() for v in text.split(",") if v.strip()]
    if not names:  # `--onnx ""` or `--onnx ,,`: an error, never the config's axis
        raise UsageError(f"--onnx {text!r}: give at least one release, like --onnx 1.18.0,1.21.0")
    plain = ",".join(v for v in names if v not in PREVIEWS)
    parse_version_list(plain or "0", "--onnx")  # junk is an error before the index is asked
    dists: dict[str, str] = {}
    versions = []
    for name in names:
        if name in PREVIEWS:
            found = releases(PREVIEWS[name], pre=True)
            if not found:
                raise UsageError(f"--onnx {name}: {PREVIEWS[name]} has no wheel for this Python")
            versions.append(found[-1])
            dists[found[-1]] = PREVIEWS[name]
        else:
            versions.append(name)
    return tuple(versions), dists


def newest_of_minors(
    versions: tuple[str, ...], axis: Axis, flag: str, offline: bool
) -> tuple[str, ...]:
    """`--onnx 1.18`: the newest 1.18.x the axis's index has a wheel of for this Python,
    said on stderr (the plan's output stays what CI reads); exact releases stay as given.
    With --offline, or an index that cannot be asked, a minor version is one line asking
    for the release."""
    package = axis.package
    out = []
    for version in versions:
        if not re.fullmatch(r"\d+\.\d+", version):
            out.append(version)
            continue
        if offline:
            ask = f"--offline cannot ask the index for the newest {version}.x"
            raise UsageError(f"{flag} {version}: {ask}; give the release, like {version}.0")
        try:
            listed = releases(package, own=axis.index)
        except CompatError as exc:
            raise UsageError(f"{flag} {version}: {exc}; or give the release") from None
        found = [v for v in listed if in_range(v, f"=={version}.*")]
        if not found:
            newest = ", ".join(listed[-3:]) or "none"
            lacks = f"the package index has no {package} {version}.x with a wheel for this Python"
            raise UsageError(f"{flag} {version}: {lacks}; its newest are {newest}")
        print(
            f"onnx-compat: {flag} {version}: {found[-1]}, the newest {version}.x", file=sys.stderr
        )
        out.append(found[-1])
    return tuple(dict.fromkeys(out))
