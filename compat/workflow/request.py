"""What a command was asked for, as frozen records: the cli parses its options into a
`Request` once (compat/cli/options.py), and every step below it reads the request, never
the command line. A test or a follow-up builds one by hand, and a command that needs a
variant of it (triage, a bisect's one case) derives it with `dataclasses.replace`.

Each part is one option group of the command line; a command without a group gets the
group's defaults, which are the command line's own.
"""

from __future__ import annotations

import importlib.resources
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class PlanRequest:
    """Which cells: the axes as given (`--onnx`, `--ort`, `--pkg`), how they combine
    (`--cross`), and the part this process runs (`--cells`, `--axis`, `--shard`)."""

    onnx: str | None = None  # `""` is an empty axis, None the configured one
    ort: str | None = None
    offline: bool = False  # range axes from their recorded resolution, not the index
    pkg: tuple[str, ...] = ()  # `NAME=V1,V2`: an extra axis each
    cross: bool = False
    cells: str | None = None  # `GLOB[,GLOB]`
    shard: str | None = None  # `K/N`
    axis: str | None = None  # `onnx` or `onnxruntime`


@dataclass(frozen=True)
class SetupRequest:
    """What every cell installs besides its axes (`--with`, `--install`): the same on
    every command that builds cells, so a bisect or a repro sees what the matrix saw."""

    with_: tuple[str, ...] = ()  # exact pins (cells of their own) or per-cell ranges
    install: str | None = None  # a project to build and install; `none`: nothing
    #: the Python axis as `--python` gave it: minor versions or a range; "" for no axis
    #: (`--python PATH`: that one interpreter, `RunRequest.python`); None: the config's
    python: str | None = None
    #: `--python-releases`: `newest` or `all` on the Pythons but one; None: the config's
    python_releases: str | None = None


@dataclass(frozen=True)
class CorpusRequest:
    """Which cases: the case modules, drop-in folders, the backend suite, the project's
    own commands, the rewrites of each, and the globs that select among them."""

    cases: str | None = None  # `GLOB[,GLOB]`
    suite: str | None = None  # `onnx-backend`
    corpus: Path | None = None  # a directory of case modules
    cases_dirs: tuple[Path, ...] = ()  # folders of drop-in models
    commands: tuple[str, ...] = ()  # `--run [NAME=]CMD`; `+CMD` adds to the config's
    mutate: str | None = None  # None: no rewrites; `""`: every rewrite; else globs


@dataclass(frozen=True)
class RunRequest:
    """How the cells run: at once, for how long, within what memory, and where their
    environments, cache and reports go."""

    jobs: int = os.cpu_count() or 1
    timeout: float | None = None  # None: the config's
    memory: float | None = None  # GiB a worker may use; None: half the machine's; 0: none
    out: Path | None = Path("reports")
    state_dir: Path | None = None  # None: `.compat/` beside the config
    python: str = sys.executable
    fresh: bool = False
    reruns: int | None = None  # None: the config's `reruns`, else DEFAULT_RERUNS
    share: bool = True
    tracebacks: bool = False


@dataclass(frozen=True)
class Request:
    """One command's shared options: the config file and each option group."""

    config: Path = Path("pyproject.toml")
    plan: PlanRequest = field(default_factory=PlanRequest)
    setup: SetupRequest = field(default_factory=SetupRequest)
    corpus: CorpusRequest = field(default_factory=CorpusRequest)
    run: RunRequest = field(default_factory=RunRequest)

    @property
    def root(self) -> Path:
        """The project's root: the config's folder (cases/, reports/, the package)."""
        return self.config.resolve().parent

    def state_dir(self) -> Path:
        """`--state-dir`, else `.compat/` beside the config (commands without the option too)."""
        return Path(self.run.state_dir or self.root / ".compat").resolve()


def default_corpus(config: Path) -> Path:
    """`cases/` beside the config when the project has one (this repository does), else
    the built-in corpus shipped with onnx-compat (`compat.builtin_cases`)."""
    beside = config.resolve().parent / "cases"
    if beside.is_dir():
        return beside
    return Path(str(importlib.resources.files("compat.builtin_cases")))
