"""The cases a command runs: the case modules, the drop-in models, the backend suite and
the project's own commands, known failures attached, selected and respelled as asked;
and the options a printed follow-up command needs to load them the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compat.core.errors import UsageError
from compat.corpus.discover import Corpus, discover_cases, select_cases
from compat.corpus.dropin import load_dropins, slug
from compat.corpus.known import attach
from compat.corpus.usercommand import DESCRIPTION, FAMILY, check_uncached, command_cases
from compat.plan.config import Config
from compat.workflow.plan import globs
from compat.workflow.request import Request, default_corpus

#: `corpus = "seed"`: the families of the documents the corpus grew from (../seeds).
SEED_FAMILIES = ("annotations", "conv_bias_fusion", "pad_pads_from_constant", "shape_slice_folding")


def builtin_cases(request: Request, config: Config) -> Corpus:
    """The case modules: `--corpus DIR`, `cases/` beside the config, else the built-in
    corpus, narrowed by `corpus = "all" | "seed" | "none"`."""
    corpus = discover_cases(request.corpus.corpus or default_corpus(request.config))
    if config.corpus == "all":
        return corpus
    keep = SEED_FAMILIES if config.corpus == "seed" else ()
    return Corpus(
        [c for c in corpus.cases if c.family in keep],
        {f: d for f, d in corpus.families.items() if f in keep},
    )


def commands_of(request: Request, config: Config) -> list[str]:
    """The commands that run: `--run` replaces the config's `run`; `--run +CMD` adds."""
    given = list(request.corpus.commands)
    if not given:
        return list(config.run)
    added = [g[1:] for g in given if g.startswith("+")]
    if len(added) == len(given):
        return [*config.run, *added]
    return [g[1:] if g.startswith("+") else g for g in given]


def load_corpus(request: Request, config: Config) -> Corpus:
    asked = request.corpus
    corpus = builtin_cases(request, config)
    dirs = [*config.cases_dirs, *asked.cases_dirs]
    sources = [load_dropins(d, config.tolerance) for d in dirs]
    if asked.suite == "onnx-backend":
        from compat.corpus.backend_suite import backend_cases  # onnx's backend tests: slow import

        sources.append(backend_cases())
    for family, description, cases in sources:
        if family in corpus.families:
            raise UsageError(f"case family {family!r} is defined twice (a drop-in directory?)")
        corpus = Corpus(corpus.cases + cases, {**corpus.families, family: description})
    runs = commands_of(request, config)
    check_uncached(config)
    if runs:
        commands = command_cases(runs, request.root, config.no_cache)
        corpus = Corpus(corpus.cases + commands, {**corpus.families, FAMILY: DESCRIPTION})
    cases = attach(corpus.cases, config.known)  # [[tool.compat.known]], over every case
    if not cases:
        raise UsageError(
            f"{config.source}: nothing to run: corpus = {config.corpus!r} and no models "
            "(cases-dirs) or commands (run); add run = ['python -m pytest -q tests'], or "
            'corpus = "seed" for the built-in cases'
        )
    try:
        chosen = select_cases(cases, globs(asked.cases))
    except UsageError as error:
        if config.corpus == "all":
            raise
        raise UsageError(
            f"{error}; [tool.compat] corpus = {config.corpus!r} in {config.source} leaves "
            "out the other built-in cases"
        ) from None
    if asked.mutate is not None:  # every other spelling of each case
        from compat.corpus.rewrites import mutated, select

        rewrites = select(asked.mutate or None)
        spelled = [v for c in chosen if not c.command for v in mutated(c, rewrites)]
        chosen = sorted([*chosen, *spelled], key=lambda c: c.id)
    return Corpus(chosen, corpus.families)


def _shown(path: Path) -> str:
    """A path as a printed command should carry it: relative to here when below here."""
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(Path.cwd()))
    except ValueError:
        return str(resolved)


def run_options(request: Request) -> dict[str, Any]:
    """The options a follow-up command needs to load this run's cases the same way
    (`--config`, `--corpus`, `--cases-dir`, `--suite`, `--timeout`), each only when it
    is not the default; recorded in the report's run metadata as `options`, read back
    by `compat.followup.repro.repro_command`."""
    asked = request.corpus
    options: dict[str, Any] = {}
    config = request.config.resolve()
    if config != (Path.cwd() / "pyproject.toml").resolve():
        options["config"] = _shown(request.config)
    if asked.corpus and asked.corpus.resolve() != config.parent / "cases":
        options["corpus"] = _shown(asked.corpus)
    if asked.cases_dirs:
        options["cases_dirs"] = {slug(d.resolve().name): _shown(d) for d in asked.cases_dirs}
    if asked.suite:
        options["suite"] = asked.suite
    if request.run.timeout is not None:
        options["timeout"] = request.run.timeout
    if asked.commands:
        options["run"] = list(asked.commands)
    if request.setup.with_:
        options["with"] = list(request.setup.with_)
    if request.setup.install:
        options["install"] = request.setup.install
    python = request.setup.python
    if python and "," not in python and python[:1].isdigit():
        options["python"] = python  # one Python: the ids do not name it, repro must
    return options
