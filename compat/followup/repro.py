"""Reproduce a cell under exact pins (a CI's), and write self-contained repro scripts."""

from __future__ import annotations

import base64
import hashlib
import json
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.utils import canonicalize_name

from compat import resources
from compat.cell import ROOT
from compat.cell.checks import BY_NAME
from compat.core.errors import UsageError
from compat.core.outcomes import CellRecord, CheckResult, Outcome
from compat.core.printed import axis_python
from compat.core.versions import exact_pin, parse_version
from compat.corpus.discover import CaseFiles
from compat.plan.config import Config
from compat.plan.index_config import shown
from compat.plan.matrix import Cell, indexes_of, requirements
from compat.state.cellcode import FILES

FAILING = frozenset({Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.XFAIL})
#: The script every repro folder gets, filled in (a real file: linted, parsed in tests).
TEMPLATE = resources.REPRO_SCRIPT
CUSTOM = "a check the case defines itself"
#: How a repro folder's environment is made and run: wheels only, anywhere; or, for a
#: project's command, in the project's folder, which pip builds (`.`) and the command uses.
HOWTO_WHEELS = "\n".join(
    [
        "    python -m venv venv && venv/bin/pip install --only-binary :all: -r requirements.txt",
        "    venv/bin/python repro.py  # exit 0: passes now; 1: fails as recorded; a crash crashes",
    ]
)
HOWTO_PROJECT = "\n".join(
    [
        "    # in the project's folder (the command runs there; pip builds the project from `.`):",
        "    python -m venv /tmp/venv && /tmp/venv/bin/pip install -r THIS_FOLDER/requirements.txt",
        "    /tmp/venv/bin/python THIS_FOLDER/repro.py  # exit 0: passes now; 1: fails as recorded",
    ]
)


@dataclass(frozen=True)
class Pins:
    onnx: str | None
    onnxruntime: str | None
    extra: tuple[str, ...]  # other exact pins (numpy==..., protobuf==...)
    onnx_dist: str = "onnx"  # "onnx-weekly" when onnx-weekly==V is pinned (a weekly cell)


def parse_pins(specs: list[str], requirements_file: Path | None) -> Pins:
    """`onnx==1.18.0` and friends, from the command line and a requirements file."""
    found: dict[str, str] = {}
    given: dict[tuple[str, str], str] = {}  # (name, where) -> version
    sources: list[tuple[str, str]] = [(s, "the command line") for s in specs]
    if requirements_file is not None:
        try:
            lines = requirements_file.read_text().splitlines()
        except OSError as exc:
            raise UsageError(f"{requirements_file}: cannot read ({exc.strerror})") from None
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if line:  # (pip's options, `-r FILE`, `--index-url URL`, are no pin: left out)
                sources.append((line, str(requirements_file)))
    for spec, where in sources:
        pin = _pin(spec, where)
        if pin is None:
            continue  # a range, or a marker false here: a line for another platform or Python
        name = pin[0].lower().replace("_", "-")
        version = pin[1]
        parse_version(version, f"{where}: {spec}")
        if (name, where) in given and given[name, where] != version:
            raise UsageError(
                f"{where}: {name} is pinned twice ({given[name, where]}, {version}); "
                "a repro is one environment: pin it once"
            )
        given[name, where] = version
        found.setdefault(name, version)  # the command line's over the file's
    weekly = found.pop("onnx-weekly", None)  # a preview build: onnx comes from it
    onnx = found.pop("onnx", None) if weekly is None else weekly
    ort = found.pop("onnxruntime", None)
    found.pop("onnx", None)
    if onnx is None and ort is None:
        raise UsageError("pin onnx or onnxruntime (or both), like: nox -s repro -- onnx==1.18.0")
    extra = tuple(f"{name}=={version}" for name, version in sorted(found.items()))
    return Pins(onnx, ort, extra, "onnx-weekly" if weekly else "onnx")


def _pin(spec: str, where: str) -> tuple[str, str] | None:
    """(name, version) of an exact pin (read by `packaging`) whose marker holds here;
    None for a range (left to the resolver, as in the matrix) or a marker false here.
    On the command line anything but a plain exact pin is an error, and so is a marker
    (the command line names one environment: this one); so is one that does not parse."""
    from packaging.markers import InvalidMarker, Marker

    command_line = where == "the command line"
    text, semicolon, marker = spec.partition(";")
    pin = exact_pin(text.strip())
    if pin is None:
        if command_line:
            raise UsageError(f"{spec!r}: pin releases exactly, like onnx==1.18.0")
        return None
    if not semicolon:
        return pin
    if command_line:
        raise UsageError(f"{spec!r}: no marker here, a repro is this machine's: like onnx==1.18.0")
    try:
        holds = Marker(marker.strip()).evaluate()
    except InvalidMarker:
        raise UsageError(
            f"{where}: {spec!r}: the marker does not parse ({marker.strip()!r})"
        ) from None
    return pin if holds else None


def repro_cell(pins: Pins, config: Config, python: str = "", shown: bool = False) -> Cell:
    """The cell for these pins; an unpinned package takes its matrix pair release.
    `python`: the CPython it is rebuilt on (`3.12`, "" for the run's interpreter);
    `shown`: its id names it (`py3.12-onnx…`, as a plan of several Pythons names it)."""
    onnx = pins.onnx or config.onnxruntime.pair
    ort = pins.onnxruntime or config.onnx.pair
    reqs = requirements(
        onnx,
        ort,
        config.constraints,
        fixed=pins.extra + config.requires,
        onnx_dist=pins.onnx_dist,
        python=python,
    )
    # from the indexes the matrix's cells install from (an axis's nightly index)
    request = replace(indexes_of(config), pins=reqs, project=config.project)
    tag = hashlib.sha256(" ".join(pins.extra).encode()).hexdigest()[:8] if pins.extra else ""
    return Cell(
        onnx,
        ort,
        request,
        tag,
        onnx_dist=pins.onnx_dist,
        python=python,
        show_python=shown and bool(python),
    )


def project_name(cell: CellRecord) -> str:
    """The normalized name of the project the cell installed, or ""."""
    project = cell.requirements.project
    if project is None:
        return ""
    try:
        name = tomllib.loads((project.path / "pyproject.toml").read_text())["project"]["name"]
    except (OSError, ValueError, KeyError):
        return ""
    return str(canonicalize_name(str(name)))


def python_note(cell: CellRecord) -> list[str]:
    """The first line of a requirements file of a cell on a Python axis: the wheels
    pinned are that Python's, so the venv must be made with it; none otherwise."""
    python = axis_python(cell)
    if not python:
        return []
    return [
        f"# CPython {python} (the cell ran on {cell.python}): make the venv with python{python}"
    ]


def with_python(howto: str, python: str) -> str:
    """The commands of a repro folder with `python -m venv` made by CPython `python`
    (`python3.12 -m venv`), when the cell was on a Python axis."""
    return howto.replace("python -m venv", f"python{python} -m venv") if python else howto


def _b64(data: bytes) -> str:
    text = base64.b64encode(data).decode()
    return "\n".join(text[i : i + 100] for i in range(0, len(text), 100))


def write_script(
    result: CheckResult, cell: CellRecord, files: CaseFiles, out: Path, folder: Path | None = None
) -> Path:
    """A repro folder (`out/CELL/CASE.CHECK/`, or `folder`): requirements.txt with the
    exact pins and a repro.py that needs nothing else — the model, its arrays and the
    worker's code travel inside it."""
    folder = folder or out / cell.id / f"{result.case}.{result.check}"
    folder.mkdir(parents=True, exist_ok=True)
    spec = json.loads((files.directory / "case.json").read_text())
    project = project_name(cell)
    # every package the cell really had (older records: the pinned ones); the project
    # itself is built from the folder repro.py runs in, as the matrix built it
    had = cell.installed or cell.packages
    pins = [f"{name}=={version}" for name, version in sorted(had.items()) if name != project]
    if project:
        pins.append(".  # this project, built from the folder you run pip in")
    python = axis_python(cell)
    indexes = cell.requirements.index_lines(shown)  # the axes' own indexes, as the cell had
    lines = [*python_note(cell), *indexes, *pins]
    (folder / "requirements.txt").write_text("\n".join(lines) + "\n")
    if "command" in spec:  # a command runs in the folder repro.py is run from
        spec["command"]["cwd"] = ""
    custom = {name: Path(c["file"]).read_bytes() for name, c in spec["custom_checks"].items()}
    blobs = {
        "case/model.onnx": (files.directory / "model.onnx").read_bytes(),
        "case/data.npz": (files.directory / "data.npz").read_bytes(),
        **{f"code/{p.relative_to(ROOT).as_posix()}": p.read_bytes() for p in FILES},
        **{f"custom/{name}.py": data for name, data in custom.items()},
    }
    text = {
        "case": result.case,
        "check": result.check,
        "cell": cell.id,
        "python": cell.python,
        "outcome": result.summary.replace('"""', "'''").replace("\\", "/")[:2000],
        "what": BY_NAME[result.check].what if result.check in BY_NAME else CUSTOM,
        "howto": with_python(HOWTO_PROJECT if project else HOWTO_WHEELS, python),
    }
    script = TEMPLATE.read_text()
    script = script.replace('"@spec@"', repr(json.dumps(spec, sort_keys=True)))
    table = "\n".join(f'    {name!r}: """\n{_b64(data)}\n""",' for name, data in blobs.items())
    script = script.replace('{"@blobs@": ""}', "{\n" + table + "\n}")
    for key, value in text.items():
        script = script.replace(f'"@{key}@"', repr(value)).replace(f"@{key}@", str(value))
    path = folder / "repro.py"
    path.write_text(script)
    path.chmod(0o755)
    return path
