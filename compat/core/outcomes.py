"""Outcomes, cell states and the frozen records that carry them."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any, NotRequired, TypedDict

from compat.core.install import InstallRequest


class Outcome(enum.StrEnum):
    """What one check in one cell came to: the names, in order, of the worker protocol's
    `compat.cell.protocol.OUTCOMES` (tests/test_protocol.py holds them equal)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    SKIP = "skip"
    XFAIL = "xfail"
    XPASS = "xpass"
    FLAKY = "flaky"  # identical runs disagree: nondeterminism, never a pass or a fail
    #: the release cannot read a user's model (its IR version or opset is newer than the
    #: release knows): the model's incompatibility with it, never a skip
    UNSUPPORTED = "unsupported"

    @property
    def unexpected(self) -> bool:
        """True for outcomes that make `nox -s matrix` exit 1."""
        return self in UNEXPECTED


UNEXPECTED = frozenset(
    {
        Outcome.FAIL,
        Outcome.ERROR,
        Outcome.CRASH,
        Outcome.TIMEOUT,
        Outcome.XPASS,
        Outcome.FLAKY,
        Outcome.UNSUPPORTED,
    }
)


class CellState(enum.StrEnum):
    """Whether a cell's environment could be built and imported."""

    READY = "ready"
    INSTALL_ERROR = "install-error"
    IMPORT_ERROR = "import-error"
    #: the index has no wheel of one of its releases for the cell's Python: not a
    #: failure, a combination that does not exist (decided before anything is built)
    NO_WHEEL = "no-wheel"


class CheckResultDict(TypedDict):
    log: NotRequired[str]
    failing: NotRequired[list[str]]
    cell: str
    case: str
    check: str
    outcome: str
    phase: str
    detail: str
    seconds: float
    known: str
    traceback: str
    origin: str


@dataclass(frozen=True)
class CheckResult:
    """One check of one case in one cell."""

    cell: str
    case: str
    check: str
    outcome: Outcome
    detail: str = ""
    phase: str = ""
    seconds: float = 0.0
    known: str = ""  # link of the known failure that classified this result
    traceback: str = ""  # the worker's full traceback behind an error or fail, if any
    #: where it was computed: "" in this cell, this run; another cell's id (same versions
    #: of every package the check depends on); "cache" (an earlier run). A check computed
    #: in parts is "" when any part was computed here, and `seconds` the time spent here
    origin: str = ""
    #: the file holding a command's whole output (`reports/logs/CELL/CASE.log`)
    log: str = ""
    #: a command's failing tests as its runner named them (pytest's node ids, unittest's
    #: names): what a baseline's comparison reads; empty when it named none
    failing: tuple[str, ...] = ()
    #: a run of it crashed or was stopped at its time (a crash, a timeout, a flaky result
    #: with either among its runs, a slow runner's skip): never remembered, computed again
    #: next time; not written to reports
    retry: bool = False

    def serialize(self) -> CheckResultDict:
        data: CheckResultDict = {
            "cell": self.cell,
            "case": self.case,
            "check": self.check,
            "outcome": self.outcome.value,
            "phase": self.phase,
            "detail": self.detail,
            "seconds": self.seconds,
            "known": self.known,
            "traceback": self.traceback,
            "origin": self.origin,
        }
        if self.log:  # only commands have one: every other result stays as it was
            data["log"] = self.log
        if self.failing:
            data["failing"] = list(self.failing)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        return cls(
            cell=data["cell"],
            case=data["case"],
            check=data["check"],
            outcome=Outcome(data["outcome"]),
            detail=data.get("detail", ""),
            phase=data.get("phase", ""),
            seconds=float(data.get("seconds", 0.0)),
            known=data.get("known", ""),
            traceback=data.get("traceback", ""),
            origin=data.get("origin", ""),
            log=data.get("log", ""),
            failing=_listed(data.get("failing", ())),
        )

    @property
    def summary(self) -> str:
        """`error@session: ...`-style one-liner for tables and the terminal."""
        head = f"{self.outcome.value}@{self.phase}" if self.phase else self.outcome.value
        return f"{head}: {self.detail}" if self.detail else head


@dataclass(frozen=True)
class CellRecord:
    """A cell as it was really built: pins asked for, versions installed, state."""

    id: str
    onnx: str
    onnxruntime: str
    state: CellState
    packages: dict[str, str] = field(default_factory=dict)
    python: str = ""
    platform: str = ""
    detail: str = ""
    requirements: InstallRequest = field(default_factory=InstallRequest)
    #: (max IR version, max default-domain opset) this onnxruntime loads, probed once
    limits: tuple[int, ...] = ()
    #: every distribution installed in the cell and its version (a repro's requirements)
    installed: dict[str, str] = field(default_factory=dict)

    def version(self, axis: str) -> str:
        """The cell's release along an axis (compat/core/vocabulary.py AXES): onnx's,
        onnxruntime's, the Python's (`3.12`), or an extra axis's package as installed;
        "" off every axis. An axis of one Python (`onnx@3.12`) is its package's."""
        axis = axis.split("@", 1)[0]
        if axis == "onnx":
            return self.onnx
        if axis == "onnxruntime":
            return self.onnxruntime
        if axis == "python":
            return ".".join(self.python.split(".")[:2])
        return self.packages.get(axis, "")

    @property
    def summary(self) -> str:
        """One line for tables: the message's first paragraph, or a traceback's last line."""
        paragraph: list[str] = []
        for line in self.detail.strip().splitlines():
            if line.startswith("Traceback"):
                break
            if not line.strip():
                if paragraph:
                    break
                continue
            paragraph.append(line.strip())
        if paragraph:
            return " ".join(paragraph)[:300]
        lines = [line.strip() for line in self.detail.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    def serialize(self) -> dict[str, Any]:
        data = asdict(self)
        data["state"] = self.state.value
        data["requirements"] = self.requirements.serialize()
        data["limits"] = list(self.limits)
        if not self.installed:
            del data["installed"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CellRecord:
        return cls(
            id=data["id"],
            onnx=data["onnx"],
            onnxruntime=data["onnxruntime"],
            state=CellState(data["state"]),
            packages=dict(data.get("packages", {})),
            python=data.get("python", ""),
            platform=data.get("platform", ""),
            detail=data.get("detail", ""),
            requirements=InstallRequest.from_strings(data.get("requirements", ())),
            limits=tuple(data.get("limits", ())),
            installed=dict(data.get("installed", {})),
        )


def _listed(value: Any) -> Any:
    """A stored list as the tuple its field holds; anything else as it is, for the
    report's type check to name (compat/core/report.py)."""
    return tuple(value) if isinstance(value, list) else value
