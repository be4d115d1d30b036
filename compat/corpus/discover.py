"""Finds the cases in cases/, selects them by glob, and writes them for the workers."""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.util
import io
import json
import re
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import onnx

from compat.cell import protocol
from compat.core.case import BUILTIN_CHECKS, Case
from compat.core.errors import ConfigError, UsageError
from compat.core.files import move_in

_ID = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")


@dataclass(frozen=True)
class CaseFiles:
    """A case as the workers see it: a directory, the hash of its model bytes, and
    `content`, the hash of everything a worker reads (model, arrays, expectations)."""

    case: Case
    directory: Path
    sha256: str
    content: str


@dataclass(frozen=True)
class Corpus:
    """The cases of a case directory, and each family's one-line description."""

    cases: list[Case]
    families: dict[str, str]


def _first_line(doc: str | None) -> str:
    paragraph = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def load_family(path: Path) -> tuple[str, list[Case]]:
    """Imports one case module: its docstring's first paragraph and its `cases()`."""
    spec = importlib.util.spec_from_file_location(f"compat_cases_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be imported as a case module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    make = getattr(module, "cases", None)
    if make is None:
        raise ConfigError(f"{path}: defines no cases() function; see cases/README.md")
    found: list[Case] = list(make())
    for case in found:
        if not _ID.match(case.id) or case.family != path.stem:
            raise ConfigError(
                f"{path}: case id {case.id!r} must look like '{path.stem}.variant' "
                "(lowercase letters, digits, '_', dots)"
            )
        unknown = set(case.builtin_checks) - set(BUILTIN_CHECKS)
        if unknown:
            raise ConfigError(f"{path}: case {case.id} names unknown check {sorted(unknown)[0]!r}")
    return _first_line(module.__doc__), found


def discover_cases(directory: Path) -> Corpus:
    """Every case of every `*.py` module in `directory` (leading `_` = private)."""
    if not directory.is_dir():
        raise ConfigError(f"{directory}: case directory not found; pass --corpus DIR")
    found: list[Case] = []
    families: dict[str, str] = {}
    for path in sorted(directory.glob("*.py")):
        if not path.name.startswith("_"):
            families[path.stem], cases = load_family(path)
            found.extend(cases)
    ids = [c.id for c in found]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"{directory}: case id {duplicates[0]!r} is defined twice")
    return Corpus(sorted(found, key=lambda c: c.id), families)


def select_cases(cases: list[Case], patterns: tuple[str, ...]) -> list[Case]:
    """Keeps cases whose id matches any glob; a glob matching nothing is a usage error."""
    if not patterns:
        return cases
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(c.id, pattern) for c in cases):
            raise UsageError(f"--cases {pattern!r} matches no case; see `--list` for the case ids")
    return [c for c in cases if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]


def _npz_bytes(case: Case) -> bytes:
    """The case's arrays as an npz whose bytes depend on the arrays alone.

    `np.savez` stamps each member with the current time; fixed stamps make the
    bytes, and so the result-cache keys, stable across runs.
    """
    arrays = {f"in.{k}": v for k, v in case.inputs.items()}
    arrays.update({f"out.{k}": v for k, v in case.expected.items()})
    for index, feeds in enumerate(case.extra_runs, start=1):
        arrays.update({f"run{index}.{k}": v for k, v in feeds.items()})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            member = io.BytesIO()
            array = np.asarray(arrays[name])
            if array.dtype == object:  # ONNX strings: fixed-width unicode needs no pickle
                array = array.astype(str)
            np.lib.format.write_array(member, array, allow_pickle=False)
            archive.writestr(
                zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue()
            )
    return buffer.getvalue()


def _pb_files(case: Case) -> dict[str, bytes]:
    """Backend-test style data: input_J.pb / output_J.pb by graph position, typed as the
    model declares each value (tensor, sequence or optional), as onnx's own cmd_tools."""
    from onnx import TensorProto, numpy_helper

    def encode(value: Any, info: onnx.ValueInfoProto) -> bytes:
        kind = info.type.WhichOneof("value")
        if kind == "sequence_type":
            proto: Any = numpy_helper.from_list(value, info.name)
        elif kind == "optional_type":
            proto = numpy_helper.from_optional(value, info.name)
        elif isinstance(value, TensorProto):
            proto = value
        else:
            proto = numpy_helper.from_array(np.asarray(value), info.name)
        data: bytes = proto.SerializeToString()
        return data

    files = {}
    graph = case.model.graph
    for j, info in enumerate(graph.input):
        if info.name in case.inputs:
            files[f"data/input_{j}.pb"] = encode(case.inputs[info.name], info)
    for j, info in enumerate(graph.output):
        if info.name in case.expected:
            files[f"data/output_{j}.pb"] = encode(case.expected[info.name], info)
    return files


def spec_of(case: Case) -> protocol.CaseSpec:
    """The JSON expectations a worker reads from case.json."""
    return protocol.case_spec(
        id=case.id,
        output_shapes={name: list(dims) for name, dims in case.output_shapes.items()},
        optimized=None
        if case.optimized is None
        else {
            "op_counts": case.optimized.op_counts,
            "meaning": case.optimized.meaning,
            "level": case.optimized.level,
        },
        custom_checks={
            c.name: {"file": c.file, "function": c.function} for c in case.custom_checks
        },
        violations=list(case.violations),
        # the case API's `command` mapping is the spec's, key for key
        command=cast(protocol.CommandSpec, dict(case.command)) if case.command else None,
        oracle=case.oracle,
        convert_to=case.convert_to,
        encoding=case.encoding,
        ort_levels=list(case.ort_levels),
        rtol=case.rtol,
        atol=case.atol,
        tolerances={name: list(pair) for name, pair in case.output_tolerances.items()},
    )


def write_case(case: Case, root: Path, keyed: bool = False) -> CaseFiles:
    """Serialises a case once, so every cell of a run reads identical model bytes.

    `keyed`: the folder is named by the case's content (`root/ID-HASH/`) and written
    only when missing (whole, by a rename), so runs sharing `root` reuse it."""
    model_bytes = case.model.SerializeToString(deterministic=True)
    spec = json.dumps(spec_of(case), indent=1, sort_keys=True).encode()
    files = {"model.onnx": model_bytes, "case.json": spec}
    if case.encoding == "pb":
        files.update(_pb_files(case))
    else:
        files["data.npz"] = _npz_bytes(case)
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name])
    everything = digest.hexdigest()
    directory = root / (f"{case.id}-{everything[:16]}" if keyed else case.id)
    if keyed and _holds(directory, files):
        return CaseFiles(case, directory.resolve(), _sha256(model_bytes), everything)
    scratch = directory
    if keyed:
        root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".writing-", dir=root))
    for name, data in files.items():
        (scratch / name).parent.mkdir(parents=True, exist_ok=True)
        (scratch / name).write_bytes(data)
    if keyed:  # a damaged one (not replaced by another run meanwhile) is replaced
        said = f"the staged case {directory} differs from its content hash: written again"
        move_in(scratch, directory, lambda d: not _holds(d, files), said)
    return CaseFiles(case, directory.resolve(), _sha256(model_bytes), everything)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _holds(directory: Path, files: dict[str, bytes]) -> bool:
    """True when a staged case folder still holds exactly the bytes it is named after
    (compared, not hashed again: the bytes are at hand)."""
    try:
        for name, data in files.items():
            path = directory / name
            if path.stat().st_size != len(data) or path.read_bytes() != data:
                return False
    except OSError:  # missing, unreadable, or a folder where a file should be
        return False
    return True
