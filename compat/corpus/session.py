"""One model being scanned (compat/corpus/scan.py): what every detector's walk of it
shares while the scan runs. The walk (compat/corpus/walk.py) is made once for all the
detectors, not once each. A time budget bounds the scan, checked at every node a walk
yields and at every step of a question that follows values through calls (`tick`), so
a model built to make that work explode is given up on in one line (`GaveUp`) instead
of hanging the scan, and the matrix, which scans every drop-in model first. The model's
external data is read when a detector asks for a constant's value, from the files the
scan checked in the model's own folder (`external_files`, with the refusals of the cells:
compat/cell/untrusted.py), never from the current one.

Outside a scan there is no session: a walk is made each time it is asked for, never
gives up, and reads no external data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from compat.core.errors import ConfigError

if TYPE_CHECKING:
    import onnx

    from compat.corpus.scopes import Site

#: a tensor's external data, from its checked file (None: no file to read it from)
Reader = Callable[["onnx.TensorProto"], "bytes | None"]


class GaveUp(Exception):
    """The scan's time budget ran out: `at` names the node the walk was at."""

    def __init__(self, seconds: float, at: str) -> None:
        super().__init__(f"gave up after {seconds:g} s, at {at}")
        self.seconds = seconds
        self.at = at


@dataclass(eq=False)
class Session:
    """The model being scanned, its walk once made, its budget and its data's reader."""

    model: onnx.ModelProto
    budget: float | None = None  # seconds; None: no limit
    read: Reader | None = None
    sites: list[Site] | None = None  # the walk of `model`, once made
    by_op: dict[str, list[int]] = field(default_factory=dict)  # default-domain op: sites
    last: Site | None = None  # the node the walk was last at
    started: float = field(default_factory=time.monotonic)

    def tick(self, site: Site | None = None) -> None:
        """Gives up once the budget is spent (`site`: where the walk is now)."""
        if site is not None:
            self.last = site
        if self.budget is not None and time.monotonic() - self.started > self.budget:
            at = self.last.path if self.last is not None else "the model's graph"
            raise GaveUp(self.budget, at)


_CURRENT: ContextVar[Session | None] = ContextVar("compat_scan_session", default=None)


def current(model: onnx.ModelProto | None = None) -> Session | None:
    """The session of the scan running, when it scans `model` (any model: None)."""
    found = _CURRENT.get()
    if found is None or (model is not None and found.model is not model):
        return None
    return found


def tick(site: Site | None = None) -> None:
    """`Session.tick` of the scan running; nothing outside a scan."""
    found = _CURRENT.get()
    if found is not None:
        found.tick(site)


@contextmanager
def scanning(
    model: onnx.ModelProto,
    budget: float | None = None,
    read: Reader | None = None,
    started: float | None = None,
) -> Iterator[Session]:
    """The scan of `model`, for the code run inside the `with` (its clock starts now, or
    at `started`: a copy of the model bound to its inputs' sizes shares the scan's)."""
    session = Session(model, budget, read, started=started or time.monotonic())
    token = _CURRENT.set(session)
    try:
        yield session
    finally:
        _CURRENT.reset(token)


def external_files(model: onnx.ModelProto, path: Path) -> dict[str, Path]:
    """The file of each external-data location of `model` (loaded from `path` without
    its data), every location checked as the cells check them before they inline the
    data (compat/cell/untrusted.py: relative, no `..` escape, resolving to a regular
    file in the model's folder, the bytes asked for in it); nothing is read.

    Raises:
        ConfigError: the first location refused, in the cells' words.
    """
    import onnx

    from compat.cell.untrusted import _entries, _resolve, model_tensors  # onnx: when used

    folder = path.absolute().parent.resolve()  # the folder of the link, for a linked model
    files: dict[str, Path] = {}
    for where, tensor in model_tensors(model):
        if tensor.data_location != onnx.TensorProto.EXTERNAL and not tensor.external_data:
            continue
        location = ""
        why = ""
        try:
            location, offset, length = _entries(tensor)
            file, why = _resolve(location, folder)
            size = file.stat().st_size if not why else 0
            end = size if length < 0 else offset + length
            if not why and end > size:
                why = f"bytes {offset} to {end} asked for, the file has {size}"
        except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: a symlink loop
            why = str(exc)
        if why:
            raise ConfigError(
                f"{path}: {where} keeps its data in {location!r}: {why}; a model's external "
                f"data must be a regular file inside its folder ({folder}), so the model is "
                "refused"
            )
        files[location] = file
    return files


def reader(files: dict[str, Path], path: Path) -> Reader:
    """The reader of a tensor's external data from its checked file (`external_files`
    of the model at `path`); a tensor of another model is not read."""
    return lambda tensor: _read(tensor, files, path)


def _read(tensor: onnx.TensorProto, files: dict[str, Path], path: Path) -> bytes | None:
    from compat.cell.untrusted import _entries

    location, offset, length = _entries(tensor)
    file = files.get(location)
    if file is None:
        return None  # not the scanned model's tensor
    try:
        with file.open("rb") as data:
            data.seek(offset)
            return data.read() if length < 0 else data.read(length)
    except OSError as exc:
        raise ConfigError(f"{path}: its external data {file}: {exc}") from None
