"""What a cell installs, typed: its pins (PEP 508 requirements, each read by `packaging`),
the project it installs (its folder and extras), folders installed editable, and the
package indexes it installs from. compat/execute/installer.py turns a request into uv's
arguments; every other module reads its fields.

A report (and an environment's marker) keeps a request as the list of strings older
onnx-compat wrote: the pins, then `--project PATH[extras]`, `-e PATH`, `--index-url URL`
and `--extra-index-url URL`. `serialize` and `from_strings` are the one place that
spelling is written and read, so stored reports load as they always did.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from compat.core.errors import CompatError
from compat.core.versions import exact_pin

#: How a stored request spells its fields that are no requirement (its serialised form).
_PROJECT = "--project "
_EDITABLE = "-e "
_INDEX = "--index-url "
_EXTRA_INDEX = "--extra-index-url "


@functools.lru_cache(maxsize=4096)  # a plan of many cells repeats the same pins
def parse_requirement(text: str) -> Requirement:
    """A pin as `packaging` reads it; a one-line error when it is no requirement."""
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        why = str(exc).splitlines()[0]  # packaging adds the text and a caret on lines below
        raise CompatError(
            f"{text!r} is not a requirement ({why}); write one like numpy==1.26.4 or 'numpy<2'"
        ) from None


@dataclass(frozen=True)
class Project:
    """The project a cell installs: its folder, built into a wheel once per run
    (compat/execute/project.py), and the extras whose dependencies come with it."""

    path: Path
    extras: tuple[str, ...] = ()


@dataclass(frozen=True)
class InstallRequest:
    """Everything one environment is built from. `pins` keep their text as written (a
    cell's id and an environment's marker read it), each checked by `packaging` here."""

    pins: tuple[str, ...] = ()
    project: Project | None = None
    editables: tuple[Path, ...] = ()
    #: the index that replaces the default one ("" keeps the user's), and indexes added
    index_url: str = ""
    extra_index_urls: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for pin in self.pins:
            parse_requirement(pin)

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        """The pins as `packaging` Requirements."""
        return tuple(parse_requirement(pin) for pin in self.pins)

    @property
    def own_index(self) -> bool:
        """Whether the cell names an index of its own (an axis's `index-url` or
        `extra-index-url`): what the user's index says of its pins is not the answer."""
        return bool(self.index_url or self.extra_index_urls)

    def exact(self) -> tuple[tuple[str, str], ...]:
        """(name as written, version) of each plain exact pin, `onnx==1.18.0`: not a
        range, a wildcard, extras, a marker or a URL (compat/core/versions.py)."""
        return tuple(filter(None, map(exact_pin, self.pins)))

    def with_pins(self, pins: Iterable[str]) -> InstallRequest:
        """The request with `pins` after its own (each once, in order)."""
        return replace(self, pins=tuple(dict.fromkeys([*self.pins, *pins])))

    def serialize(self) -> list[str]:
        """The request as a report and a marker store it: the strings older onnx-compat
        wrote (the module docstring), so their readers and an environment's identity
        stay as they were."""
        out = list(self.pins)
        if self.project is not None:
            extras = f"[{','.join(self.project.extras)}]" if self.project.extras else ""
            out.append(f"{_PROJECT}{self.project.path}{extras}")
        out += [f"{_EDITABLE}{path}" for path in self.editables]
        out += [f"{_INDEX}{self.index_url}"] if self.index_url else []
        out += [f"{_EXTRA_INDEX}{url}" for url in self.extra_index_urls]
        return out

    def index_lines(self, url: Callable[[str], str] = str) -> list[str]:
        """Its indexes as a requirements file names them (pip and uv read the same
        options there), each URL written as `url` gives it (without credentials, for a
        repro folder that travels with a bug report)."""
        lines = [f"{_INDEX}{url(self.index_url)}"] if self.index_url else []
        return lines + [f"{_EXTRA_INDEX}{url(extra)}" for extra in self.extra_index_urls]

    def shown(self) -> str:
        """One line for the plan and the terminal: the stored strings, space-separated."""
        return " ".join(self.serialize())

    @classmethod
    def from_strings(cls, items: Iterable[str]) -> InstallRequest:
        """The request a report or a marker stored (`serialize`, or any older
        onnx-compat's list, where a project and indexes may come in any order);
        ValueError, saying what is wrong, for a list that holds no request (a crafted
        report), as compat/core/report.py's readers expect."""
        pins: list[str] = []
        project: Project | None = None
        editables: list[Path] = []
        index_url = ""
        extra: list[str] = []
        for text in items:
            if not isinstance(text, str):
                raise ValueError(f"requirements: {text!r:.80} is not a string")
            if text.startswith(_PROJECT):
                project = _project(text[len(_PROJECT) :])
            elif text.startswith(_EDITABLE):
                editables.append(Path(text[len(_EDITABLE) :]))
            elif text.startswith(_INDEX):
                index_url = text[len(_INDEX) :]
            elif text.startswith(_EXTRA_INDEX):
                extra.append(text[len(_EXTRA_INDEX) :])
            else:
                pins.append(text)
        try:
            return cls(tuple(pins), project, tuple(editables), index_url, tuple(extra))
        except CompatError as exc:
            raise ValueError(f"requirements: {exc}") from None


def _project(text: str) -> Project:
    """`/x/y[test,docs]` -> Project(Path("/x/y"), ("test", "docs"))."""
    extras: tuple[str, ...] = ()
    if text.endswith("]") and "[" in text:
        text, _, inside = text[:-1].rpartition("[")
        extras = tuple(e.strip() for e in inside.split(",") if e.strip())
    return Project(Path(text), extras)
