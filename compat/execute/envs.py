"""Creates (or reuses) one isolated virtual environment per cell, with uv."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from filelock import FileLock
from packaging.utils import canonicalize_name

from compat.core.errors import CompatError
from compat.core.files import replace_text, warn
from compat.core.outcomes import CellRecord, CellState
from compat.core.versions import parse_version
from compat.execute.project import Built, build, parse_flag
from compat.plan.matrix import Cell
from compat.state import cellcode

MARKER = "compat-env.json"
INSTALL_TIMEOUT = 1800  # seconds; a first download of every release is slow, not this slow


@dataclass(frozen=True)
class Environment:
    """A cell's environment: its interpreter and what was really installed."""

    record: CellRecord
    python: Path
    code: Path  # the staged in-cell code, the cell processes' PYTHONPATH


def find_uv() -> str:
    """The uv binary: on PATH (nox puts the session's own first), else the `uv` package's."""
    found = shutil.which("uv")
    if found:
        return found
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except Exception:  # ImportError, or its own lookup failing on an odd sysconfig
        raise CompatError("uv not found; install it with `pip install uv`") from None


def env_python(directory: Path) -> Path:
    return directory / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _identity(cell: Cell, base_python: str, root: Path) -> dict[str, object]:
    """What makes an environment reusable: same pins (the project's dependencies as its
    wheel declares them), same base interpreter. The project's own code is not in it: a
    new build of the project is installed into the environment as it is."""
    return {
        "requirements": expanded(cell.requirements, root, base_python),
        "base_python": base_interpreter(base_python),
    }


def _project(cell: Cell, root: Path, base_python: str) -> Built | None:
    """The project's wheel (built once per run) when the cell installs the project."""
    for requirement in cell.requirements:
        found = parse_flag(requirement)
        if found:
            return build(found[0], root.parent, base_python)
    return None


def expanded(requirements: tuple[str, ...], root: Path, base_python: str) -> list[str]:
    """The requirements with `--project ROOT[extras]` replaced by the wheel's own
    dependencies for those extras (uv resolves them per cell, like every pin)."""
    out: list[str] = []
    for requirement in requirements:
        found = parse_flag(requirement)
        if found:
            out += build(found[0], root.parent, base_python).requirements(found[1])
        else:
            out.append(requirement)
    return list(dict.fromkeys(out))


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


def _trim(text: str, head: int = 20, tail: int = 30) -> str:
    """The installer's or interpreter's message, with the middle of a long one elided."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    if len(lines) > head + tail:
        lines = [*lines[:head], f"[... {len(lines) - head - tail} lines ...]", *lines[-tail:]]
    return "\n".join(lines)


def install_args(requirements: tuple[str, ...]) -> list[str]:
    """uv's arguments for a cell's requirements: `-e PATH` (the project, `--install`) and
    an axis's `--index-url URL` / `--extra-index-url URL` become two."""
    args: list[str] = []
    for requirement in requirements:
        flag = requirement.startswith(("-e ", "--index-url ", "--extra-index-url "))
        args += requirement.split(" ", 1) if flag else [requirement]
    return args


def _pins(requirements: tuple[str, ...]) -> list[tuple[str, str]]:
    """The exactly pinned (name, version) pairs of a cell's requirements."""
    pairs = []
    for requirement in requirements:
        name, sep, version = requirement.partition("==")
        if sep and ";" not in version:
            pairs.append((name.strip().lower(), version.strip()))
    return pairs


def resolver_reason(message: str, requirements: tuple[str, ...] = ()) -> str:
    """The resolver's reason in one line: uv's "Because onnx>=1.23.2 depends on
    protobuf>=6.31.1 ..." -> "onnx>=1.23.2 requires protobuf>=6.31.1, not
    protobuf==3.20.3" (the cell's own pin of that package); "" when there is none."""
    text = " ".join(message.replace("╰─▶", " ").split())
    dep = r"(\S+) depends on ([A-Za-z0-9_.-]+[<>=!~][^\s]*?),?"
    both = re.search(rf"Because {dep} and {dep} we can conclude", text)
    if both:  # two packages' requirements of a third clash: "… but onnxruntime>=1.32 requires …"
        a, a_needs, b, b_needs = both.groups()
        return f"{a} requires {a_needs}, but {b} requires {b_needs}"
    found = re.search(r"Because (\S+) depends on ([A-Za-z0-9_.-]+)([<>=!~][^\s]*?),? ", text)
    if found:
        who, name, spec = found.groups()
        # "... and you require numpy<2": the requirement it really clashes with
        clash = re.match(r"and you require ([A-Za-z0-9_.-]+[<>=!~][^\s,]*)", text[found.end() :])
        if clash and re.split(r"[<>=!~]", clash.group(1))[0].lower() == name.lower():
            return f"{who} requires {name}{spec}, but the cell requires {clash.group(1)}"
        pinned = [
            r for r in requirements
            if re.split(r"[<>=!~ ;]", r)[0].lower() == name.lower() and r.lower() != name.lower()
        ]  # fmt: skip
        return f"{who} requires {name}{spec}" + (f", not {pinned[0]}" if pinned else "")
    start = text.find("Because ")
    if start < 0:
        return ""
    sentence = text[start + len("Because ") :]
    if ", we can conclude" in sentence:
        sentence = sentence[: sentence.index(", we can conclude")]
    return sentence.rstrip(".")


def _broken(cell: Cell, state: CellState, message: str) -> CellRecord:
    return CellRecord(
        id=cell.id,
        onnx=cell.onnx,
        onnxruntime=cell.onnxruntime,
        state=state,
        detail=_trim(message) or "(no message)",
        requirements=cell.requirements,
    )


def _run(
    command: list[str], timeout: float, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    if env is None:
        env = dict(os.environ)
        env.pop("VIRTUAL_ENV", None)  # uv must target the cell, not the host session
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, check=False
    )


def probe(cell: Cell, python: Path, code: Path) -> CellRecord:
    """Imports the stack in the cell and runs a tiny model; import-error on failure."""
    pinned = dict(_pins(cell.requirements))
    others = sorted(set(pinned) - {"onnx", "onnxruntime", "numpy", "protobuf"})
    try:
        command = cellcode.command(python, "probe", *others)
        done = _run(command, timeout=300, env=cellcode.environ(code), cwd=code)
    except subprocess.TimeoutExpired:
        return _broken(cell, CellState.IMPORT_ERROR, "import probe ran past 300 s")
    if done.returncode != 0:
        return _broken(cell, CellState.IMPORT_ERROR, done.stderr or done.stdout)
    info = json.loads(done.stdout.strip().splitlines()[-1])
    wrong = [
        f"asked for {name}=={want}, installed {info['packages'].get(name) or 'nothing'}"
        for name, want in pinned.items()
        if name in info["packages"]
        and parse_version(info["packages"][name] or "0", name) != parse_version(want, name)
    ]
    if wrong:  # never a silent substitution
        return _broken(cell, CellState.INSTALL_ERROR, "; ".join(wrong))
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


def ensure_env(cell: Cell, root: Path, base_python: str = sys.executable) -> Environment:
    """Returns the cell's environment, creating it only when its pins changed.

    Never raises for a broken cell: install and import failures become the
    record's state, carrying uv's or the interpreter's own message. Runs that
    share a state directory take turns per environment: a second run waits for
    the environment the first is building, then uses it.
    """
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(root / f".{cell.id}.lock"):
        return _reuse(cell, root, base_python) or _build(cell, root, base_python)


def existing_env(cell: Cell, root: Path, base_python: str = sys.executable) -> Environment | None:
    """The cell's environment when it is built already with the same pins, else None
    (nothing is built: a run starts checks in these while it builds the others)."""
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(root / f".{cell.id}.lock"):
        return _reuse(cell, root, base_python)


def _same(saved: object, identity: dict[str, object]) -> bool:
    """A marker written with the interpreter path as given (older onnx-compat) still
    matches when it resolves to the same base interpreter."""
    if not isinstance(saved, dict):
        return False
    base = saved.get("base_python")
    return {**saved, "base_python": base_interpreter(str(base)) if base else base} == identity


def _read_marker(marker: Path) -> dict[str, Any] | None:
    """The marker as written, or None when it is missing, unreadable or not an object."""
    try:
        saved = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def _saved_record(saved: dict[str, Any]) -> CellRecord | None:
    try:
        return CellRecord.from_dict(saved["record"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _reuse(cell: Cell, root: Path, base_python: str) -> Environment | None:
    directory = root / cell.id
    python = env_python(directory)
    code = cellcode.stage(root.parent / "code")
    marker = directory / MARKER
    identity = _identity(cell, base_python, root)
    project = _project(cell, root, base_python)
    if not (marker.is_file() and python.exists()):
        return None
    saved = _read_marker(marker)
    if saved is None:
        _damaged(cell, marker, f"its {MARKER} is unreadable")
        return None
    if not _same(saved.get("identity"), identity):
        return None  # its pins changed: built again, as it should be
    record = _saved_record(saved)
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
    if record.state is CellState.READY and not (record.limits and record.installed):
        # probed by an older onnx-compat: probe again, the environment stays
        record = probe(cell, python, code)
        saved["record"] = record.serialize()
        replace_text(marker, json.dumps(saved, indent=1))
    stale = project and saved.get("project") != project.sha256
    if project and stale and record.state is CellState.READY:
        record = _install_project(cell, python, record, project)
        saved.update(record=record.serialize(), project=project.sha256)
        saved["fingerprint"] = fingerprint(directory)  # the project's own files changed
        replace_text(marker, json.dumps(saved, indent=1))
    return Environment(record, python, code)


def _versions(record: CellRecord) -> str:
    packages = ", ".join(f"{k} {v}" for k, v in sorted(record.packages.items()))
    return f"{record.state.value}" + (f" ({packages})" if packages else "")


def _damaged(cell: Cell, marker: Path, why: str) -> None:
    """Forgets an environment that differs from what was built: it is built again (once:
    without its marker, the next look finds it not built)."""
    warn(f"environment {cell.id} differs from what was built ({why}): rebuilding it")
    with contextlib.suppress(OSError):  # then the build fails, saying why
        marker.unlink(missing_ok=True)


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
    dists, files = recorded.get("dists"), recorded.get("files")
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
    found += [f"{_dist_name(k)}'s files changed" for k, size in now.items()
              if k in dists and dists[k] != size]  # fmt: skip
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


def _install_project(cell: Cell, python: Path, record: CellRecord, project: Built) -> CellRecord:
    """Installs (again) the project's wheel alone: its dependencies are in already."""
    command = [find_uv(), "pip", "install", "--quiet", "--no-deps", "--reinstall-package",
               project.name, "--python", str(python), str(project.wheel)]  # fmt: skip
    done = _run(command, timeout=INSTALL_TIMEOUT)
    if done.returncode != 0:
        message = f"installing {project.wheel.name}: {done.stderr or done.stdout}"
        return _broken(cell, CellState.INSTALL_ERROR, message)
    # the stack is as probed; only the project changed (a probe per cell would cost 1 s)
    installed = {**record.installed, canonicalize_name(project.name): project.version}
    return replace(record, installed=installed)


def _build(cell: Cell, root: Path, base_python: str) -> Environment:
    directory = root / cell.id
    python = env_python(directory)
    code = cellcode.stage(root.parent / "code")
    marker = directory / MARKER
    identity = _identity(cell, base_python, root)
    project = _project(cell, root, base_python)
    if directory.exists():
        shutil.rmtree(directory)
    uv = find_uv()
    steps = [
        [uv, "venv", "--quiet", "--no-python-downloads", "--python", base_python, str(directory)],
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--no-build",
            "--python",
            str(python),
            *install_args(tuple(expanded(cell.requirements, root, base_python))),
        ],
    ]
    if project is not None:  # the project's own wheel, after what it depends on
        steps.append([uv, "pip", "install", "--quiet", "--no-deps", "--python", str(python),
                      str(project.wheel)])  # fmt: skip
    for command in steps:
        try:
            done = _run(command, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            message = f"`{' '.join(command[1:3])}` ran past {INSTALL_TIMEOUT} s"
            return Environment(_broken(cell, CellState.INSTALL_ERROR, message), python, code)
        if done.returncode != 0:
            message = done.stderr or done.stdout
            reason = resolver_reason(message, cell.requirements)
            message = f"{reason}\n\n{message}" if reason else message
            record = _broken(cell, CellState.INSTALL_ERROR, message)
            shutil.rmtree(directory, ignore_errors=True)  # retried next run: may be transient
            return Environment(record, python, code)
    record = probe(cell, python, code)
    saved: dict[str, object] = {"identity": identity, "record": record.serialize()}
    if project is not None:
        saved["project"] = project.sha256
    saved["fingerprint"] = fingerprint(directory)
    replace_text(marker, json.dumps(saved, indent=1))
    return Environment(record, python, code)
