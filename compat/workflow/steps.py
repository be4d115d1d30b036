"""The steps every command shares: resolve the plan, load the corpus, the settings,
and the terminal summary. Each is a plain function of the parsed arguments."""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from compat.core.errors import UsageError
from compat.core.printed import repro_command
from compat.core.report import Report
from compat.corpus.discover import Corpus, discover_cases, select_cases
from compat.corpus.dropin import load_dropins, slug
from compat.corpus.known import attach
from compat.corpus.usercommand import DESCRIPTION, FAMILY, command_cases
from compat.execute.project import build, flag, group_requirements, is_package
from compat.execute.run import Settings
from compat.plan.config import Config
from compat.plan.follow import follow, previews
from compat.plan.index import check_on_index
from compat.plan.matrix import (
    Plan,
    expand,
    parse_axis,
    parse_shard,
    parse_version_list,
    parse_with,
    select_axis,
    select_cells,
    select_shard,
)
from compat.render.spellings import render_spellings
from compat.render.terminal import (
    closing_line,
    render_grid,
    render_summary,
    render_unexpected,
    use_colour,
)


def globs(text: str | None) -> tuple[str, ...]:
    return tuple(g.strip() for g in (text or "").split(",") if g.strip())


def follow_axes(args: argparse.Namespace, config: Config) -> tuple[Config, dict[str, object]]:
    """The config with its range axes resolved from the package index (compat/plan/follow.py),
    or from the state directory's record with --offline; and what was resolved."""
    return follow(config, state_dir(args), getattr(args, "offline", False))


def state_dir(args: argparse.Namespace) -> Path:
    """`--state-dir`, else `.compat/` beside the config (commands without the option too)."""
    given = getattr(args, "state_dir", None)
    return Path(given or args.config.resolve().parent / ".compat").resolve()


def resolve_plan(args: argparse.Namespace, config: Config) -> tuple[Plan, Plan]:
    """(the whole plan, the part this process runs): they differ only with --shard."""
    config, _ = follow_axes(args, config)
    config = project_config(args, config)
    onnx: tuple[str, ...] | None = None
    dists: dict[str, str] = {}
    if args.onnx is not None:  # `--onnx ""` is an empty list, never the configured axis
        onnx, dists = previews(args.onnx)
    ort = parse_version_list(args.ort, "--ort") if args.ort is not None else None
    if not getattr(args, "offline", False):  # a release the index lacks: said now
        if onnx:
            plain = tuple(v for v in onnx if v not in dists)
            check_on_index(plain, "onnx", "--onnx", config.onnx.index_url)
        if ort:
            check_on_index(ort, "onnxruntime", "--ort", config.onnxruntime.index_url)
    given = dict(parse_axis(text) for text in getattr(args, "pkg", []))
    extra = tuple({**dict(config.axes), **given}.items())
    plan = expand(config, onnx, ort, args.cross, extra, fixed_requirements(args), dists)
    whole = select_cells(plan, globs(args.cells))
    if getattr(args, "axis", None):
        whole = select_axis(whole, args.axis)
    if args.shard:
        return whole, select_shard(whole, *parse_shard(args.shard))
    return whole, whole


def fixed_requirements(args: argparse.Namespace) -> tuple[str, ...]:
    """`--with` exact pins: each makes its own environments (`-with-numpy1.26.4` in ids)."""
    return tuple(r for r, exact in map(parse_with, getattr(args, "with_", [])) if exact)


def project_config(args: argparse.Namespace, config: Config) -> Config:
    """The config with everything every cell installs besides its axes in `requires`:
    its own `requires`, `--with` ranges, the project's dependency groups, and the
    project itself (`--project ROOT[extras]`, built once per run: compat/execute/project.py).
    Cell ids stay as they are: these are the project's setup, the same in every cell."""
    ranges = [r for r, exact in map(parse_with, getattr(args, "with_", [])) if not exact]
    root = args.config.resolve().parent
    groups = group_requirements(root, config.groups, f"{config.source} [tool.compat]")
    project = installed_project(args, config)
    if config.extras and project is None:
        raise UsageError(
            f"{config.source}: [tool.compat] extras = {list(config.extras)} needs the project "
            "installed in the cells; it is when it runs commands and is a package, or with "
            "--install PATH"
        )
    flags = [flag(project, config.extras if project == root else ())] if project else []
    requires = tuple(dict.fromkeys([*config.requires, *ranges, *groups, *flags]))
    return replace(config, requires=requires)


def installed_project(args: argparse.Namespace, config: Config) -> Path | None:
    """The project every cell installs (its wheel, built once per run) before its
    commands run: `--install PATH`, or the project itself when it runs commands (`--run`,
    `run = [...]`) and is a package; `--install none` installs none."""
    given = getattr(args, "install", None)
    if given == "none":
        return None
    if given:
        path = Path(given).resolve()
        if not is_package(path):
            raise UsageError(
                f"--install {given}: no pyproject.toml with [project] or setup.py there"
            )
        return path
    root = args.config.resolve().parent
    if not (config.run or getattr(args, "run", [])):
        return None
    return root if is_package(root) else None


def prepare_project(args: argparse.Namespace, config: Config) -> None:
    """Builds the project the cells install, before any cell: a project that cannot be
    built is one error line now, not a broken cell each."""
    project = installed_project(args, config)
    if project is None:
        return
    built = build(project, state_dir(args), getattr(args, "python", sys.executable))
    unknown = [e for e in config.extras if canonicalize_name(e) not in built.extras]
    if unknown and project == args.config.resolve().parent:
        raise UsageError(
            f"{config.source}: [tool.compat] extras: {unknown[0]!r} is not an extra of "
            f"{built.name} (it has: {', '.join(built.extras) or 'none'})"
        )


def default_corpus(config: Path) -> Path:
    """`cases/` beside the config when the project has one (this repository does), else
    the built-in corpus shipped with onnx-compat (`compat.builtin_cases`)."""
    beside = config.resolve().parent / "cases"
    if beside.is_dir():
        return beside
    import importlib.resources

    return Path(str(importlib.resources.files("compat.builtin_cases")))


#: `corpus = "seed"`: the families of the documents the corpus grew from (../seeds).
SEED_FAMILIES = ("annotations", "conv_bias_fusion", "pad_pads_from_constant",
                 "shape_slice_folding")  # fmt: skip


def builtin_cases(args: argparse.Namespace, config: Config) -> Corpus:
    """The case modules: `--corpus DIR`, `cases/` beside the config, else the built-in
    corpus, narrowed by `corpus = "all" | "seed" | "none"`."""
    corpus = discover_cases(args.corpus or default_corpus(args.config))
    if config.corpus == "all":
        return corpus
    keep = SEED_FAMILIES if config.corpus == "seed" else ()
    return Corpus(
        [c for c in corpus.cases if c.family in keep],
        {f: d for f, d in corpus.families.items() if f in keep},
    )


def commands_of(args: argparse.Namespace, config: Config) -> list[str]:
    """The commands that run: `--run` replaces the config's `run`; `--run +CMD` adds."""
    given = list(getattr(args, "run", []) or [])
    if not given:
        return list(config.run)
    added = [g[1:] for g in given if g.startswith("+")]
    if len(added) == len(given):
        return [*config.run, *added]
    return [g[1:] if g.startswith("+") else g for g in given]


def load_corpus(args: argparse.Namespace, config: Config) -> Corpus:
    corpus = builtin_cases(args, config)
    sources = [load_dropins(d) for d in [*config.cases_dirs, *args.cases_dir]]
    if args.suite == "onnx-backend":
        from compat.corpus.backend_suite import backend_cases  # onnx's backend tests: slow import

        sources.append(backend_cases())
    for family, description, cases in sources:
        if family in corpus.families:
            raise UsageError(f"case family {family!r} is defined twice (a drop-in directory?)")
        corpus = Corpus(corpus.cases + cases, {**corpus.families, family: description})
    runs = commands_of(args, config)
    if runs:
        commands = command_cases(runs, args.config.resolve().parent)
        corpus = Corpus(corpus.cases + commands, {**corpus.families, FAMILY: DESCRIPTION})
    cases = attach(corpus.cases, config.known)  # [[tool.compat.known]], over every case
    if not cases:
        raise UsageError(
            f"{config.source}: nothing to run: corpus = {config.corpus!r} and no models "
            "(cases-dirs) or commands (run); add run = ['python -m pytest -q tests'], or "
            'corpus = "seed" for the built-in cases'
        )
    try:
        chosen = select_cases(cases, globs(args.cases))
    except UsageError as error:
        if config.corpus == "all":
            raise
        raise UsageError(
            f"{error}; [tool.compat] corpus = {config.corpus!r} in {config.source} leaves "
            "out the other built-in cases"
        ) from None
    if getattr(args, "mutate", None) is not None:  # every other spelling of each case
        from compat.corpus.rewrites import mutated, select

        rewrites = select(args.mutate or None)
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


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options a follow-up command needs to load this run's cases the same way
    (`--config`, `--corpus`, `--cases-dir`, `--suite`, `--timeout`), each only when it
    is not the default; recorded in the report's run metadata as `options`, read back
    by `compat.followup.repro.repro_command`."""
    options: dict[str, Any] = {}
    config = args.config.resolve()
    if config != (Path.cwd() / "pyproject.toml").resolve():
        options["config"] = _shown(args.config)
    if args.corpus and args.corpus.resolve() != config.parent / "cases":
        options["corpus"] = _shown(args.corpus)
    if args.cases_dir:
        options["cases_dirs"] = {slug(d.resolve().name): _shown(d) for d in args.cases_dir}
    if args.suite:
        options["suite"] = args.suite
    if args.timeout is not None:
        options["timeout"] = args.timeout
    if getattr(args, "run", None):
        options["run"] = list(args.run)
    if getattr(args, "with_", None):
        options["with"] = list(args.with_)
    if getattr(args, "install", None):
        options["install"] = args.install
    return options


def check_options(args: argparse.Namespace) -> None:
    """Nonsense numbers and paths, as one usage line before anything runs."""
    numbers = (("jobs", 1, "cells at once"), ("reruns", 0, "reruns of an unexpected result"))
    for name, least, what in numbers:
        value = getattr(args, name, None)
        if value is not None and value < least:
            raise UsageError(f"--{name} {value}: give at least {least} ({what})")
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not 0 < timeout < math.inf:
        raise UsageError(
            f"--timeout {timeout:g}: give a positive number of seconds, like --timeout 60"
        )
    for name in ("out", "state_dir"):
        path = getattr(args, name, None)
        existing = next((p for p in [path, *path.parents] if p.exists()), None) if path else None
        if existing is not None and not existing.is_dir():
            flag = "--" + name.replace("_", "-")
            which = "it" if existing == path else str(existing)
            raise UsageError(
                f"{flag} {path}: {which} is a file, not a directory; give a directory "
                "(it is created when missing)"
            )
        if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
            flag = "--" + name.replace("_", "-")  # found now, not after every check ran
            raise UsageError(f"{flag} {path}: {existing} is not writable; give a directory "
                             "you can write to")  # fmt: skip
    memory = getattr(args, "memory", None)
    if memory is not None and not 0 <= memory < math.inf:
        raise UsageError(
            f"--memory {memory:g}: give the gigabytes a worker may use, or 0: no limit"
        )
    python = getattr(args, "python", None)
    if python is not None and shutil.which(python) is None:
        raise UsageError(f"--python {python}: no such interpreter; give a Python executable")


def memory_limit(given: float | None, jobs: int) -> int:
    """A worker's address-space limit in bytes: `--memory GB` (0: none), else half the
    machine's memory shared by the cells that run at once, at least 2 GiB."""
    if given is not None:
        return int(given * 2**30)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not a POSIX system: no limit
        return 0
    return max(2 * 2**30, total // 2 // max(1, jobs))


def settings_of(args: argparse.Namespace, config: Config) -> Settings:
    check_options(args)
    state = state_dir(args)
    return Settings(
        envs_dir=state / "envs",
        work_dir=state / "work",
        timeout=args.timeout or config.timeout,
        jobs=args.jobs,
        python=args.python,
        cache_dir=state / "cache",
        fresh=args.fresh,
        reruns=getattr(args, "reruns", 3),
        tracebacks=getattr(args, "tracebacks", False),
        share=getattr(args, "share", True),
        command_timeout=config.command_timeout,
        memory=memory_limit(getattr(args, "memory", None), args.jobs),
        logs_dir=args.out.resolve() / "logs" if getattr(args, "out", None) else None,
    )


def describe_plan(plan: Plan, corpus: Corpus) -> str:
    checks = sum(len(c.checks) for c in corpus.cases)
    lines = [
        f"{len(plan.cells)} cells × {len(corpus.cases)} cases "
        f"({checks} checks per cell, {checks * len(plan.cells)} in all)",
        "",
        "cells:",
    ]
    lines += [f"  {c.id:28} {' '.join(c.requirements)}" for c in plan.cells]
    lines += ["", "cases:"]
    lines += [f"  {c.id:44} {', '.join(c.checks)}" for c in corpus.cases]
    return "\n".join(lines)


def repro_hints(report: Report) -> dict[str, str]:
    """One `nox -s repro` command per unexpected cell, with the run's corpus options."""
    cells = {c.id: c for c in report.cells}
    options = report.run.get("options")
    hints = {}
    for cell in report.broken_cells:
        hints[cell.id] = repro_command(cell, [], options)
    for cell_id in dict.fromkeys(r.cell for r in report.unexpected):
        cases = sorted({r.case for r in report.unexpected if r.cell == cell_id})
        hints[cell_id] = repro_command(cells[cell_id], cases, options)
    return hints


def provenance(report: Report) -> str:
    """Where the results came from: computed here, shared between cells with the same
    versions of what a check depends on, or an earlier run's."""
    if report.run.get("remembered"):
        return "nothing changed since the last run: no check ran"
    here = sum(1 for r in report.results if r.origin == "")
    cached = sum(1 for r in report.results if r.origin == "cache")
    shared = len(report.results) - here - cached
    parts = [f"{here} computed", f"{shared} shared between cells", f"{cached} from earlier runs"]
    reran = report.run.get("reran")
    return ", ".join(parts + ([f"{reran} reruns"] if reran else []))


def claims(report: Report, pyproject: Path) -> list[str]:
    """ "pyproject says onnx>=1.13; your tests fail on 1.16.2–1.18.0 (passing from 1.19.0)":
    each of the project's commands set against the ranges its pyproject declares, on the
    cells of each axis (compat/adopt/declared.py says it)."""
    from compat.adopt.declared import claims_line, declared_ranges

    if not pyproject.is_file():
        return []
    ranges = declared_ranges(pyproject)
    cells = {c.id: c for c in report.cells}
    names = sorted({r.case for r in report.results if r.case.startswith(f"{FAMILY}.")})
    lines = []
    for case in names:
        outcomes = [
            (package, cells[r.cell].onnx if package == "onnx" else cells[r.cell].onnxruntime,
             r.outcome.value == "pass")
            for package, axis in (("onnx", "onnx"), ("onnxruntime", "onnxruntime"))
            for r in report.results
            if r.case == case and r.cell in report.axes.get(axis, ())
            and r.outcome.value not in ("skip", "flaky")
        ]  # fmt: skip
        what = "your tests" if len(names) == 1 else f"`{case.split('.', 1)[1]}`"
        line = claims_line(ranges, outcomes, what)
        if line:
            lines.append(line)
    return lines


def finish(
    report: Report, paths: list[Path], grid: str | None = None, pyproject: Path | None = None
) -> int:
    """The terminal summary and the exit code shared by `matrix` and `merge`: the family ×
    release summary, what needs a look (with repro commands), a closing line of counts
    and the files; the full grid of rows with `--grid` (`--grid=all`: passing rows too)."""
    colour = use_colour(sys.stdout.isatty())
    if grid:
        print(render_grid(report, every_row=grid == "all"))
        print()
    print(render_summary(report, colour))
    hints = repro_hints(report)
    folder = paths[0].parent if paths else Path()
    unexpected = render_unexpected(report, hints, str(folder))
    print()
    print(unexpected or "no unexpected results")
    spellings = render_spellings(report)
    if spellings:
        print()
        print(spellings)
    said = claims(report, pyproject) if pyproject else []
    if said:
        print()
        print("\n".join(said))
    print()
    print(closing_line(report, provenance(report)))
    top = [p.name for p in paths if p.parent == folder and p.name != "matrix.json"]
    nested = Counter(p.parent.name for p in paths if p.parent != folder)
    names = ", ".join([*top, *(f"{d}/ ({n} page{'s' * (n != 1)})" for d, n in nested.items())])
    line = f"reports in {folder}/: {names}"
    if len(line) > 118:  # the terminal stays within its width
        print(f"reports in {folder}/:")
        line = f"  {names}"
    hint = "" if grid else "--grid prints every row here"
    print(f"{line}; {hint}" if hint and len(line) + len(hint) < 118 else line)
    if hint and len(line) + len(hint) >= 118:
        print(hint)
    return 1 if hints else 0
