"""`onnx-compat bisect --package P`: the first release of onnx or onnxruntime where one
check of one case changes its outcome, each probe a cell of its own."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from compat.cli.options import add_config, add_corpus, add_run, add_setup, request_of
from compat.core.errors import UsageError
from compat.workflow.request import Request

if TYPE_CHECKING:
    from compat.core.case import Case
    from compat.corpus.discover import Corpus
    from compat.plan.index_config import AxisIndex


@dataclass(frozen=True)
class BisectRequest:
    """The shared options, and what to bisect: which check of which case, on which
    package's releases, between which."""

    common: Request
    package: str  # `onnx` or `onnxruntime`
    case: str | None = None  # None with one --run command: its case
    check: str | None = None  # None with --run: `command`
    good: str | None = None  # None: the axis start
    bad: str | None = None  # None: the newest
    pre: bool = False
    yanked: bool = False


PARSER = {"epilog": "example: onnx-compat bisect --package onnxruntime --run 'pytest -q tests'"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--case", help="the case id (default with one --run: its case)")
    parser.add_argument("--check", help="the check id (default with --run: command)")
    parser.add_argument(
        "--package", required=True, choices=("onnx", "onnxruntime"), help="whose releases"
    )
    parser.add_argument("--good", metavar="V", help="first release (default: the axis start)")
    parser.add_argument("--bad", metavar="V", help="last release (default: the newest)")
    parser.add_argument("--pre", action="store_true", help="include pre-releases")
    parser.add_argument("--yanked", action="store_true", help="include yanked releases")
    add_config(parser)
    add_setup(parser)
    add_corpus(parser)
    add_run(parser)


def request(args: argparse.Namespace) -> BisectRequest:
    return BisectRequest(
        request_of(args),
        args.package,
        args.case,
        args.check,
        args.good,
        args.bad,
        args.pre,
        args.yanked,
    )


def chosen(request: BisectRequest, corpus: Corpus) -> tuple[Case, str]:
    """The case and check to bisect: as named, or the one `--run` command's."""
    commands = [c for c in corpus.cases if c.command]
    case_id = request.case
    check = request.check
    if case_id is None and len(commands) == 1:  # `bisect --run 'pytest …'`
        case_id = commands[0].id
        check = check or "command"
    if case_id is None or check is None:
        raise UsageError("name the --case and --check to bisect (or give one --run command)")
    case = next((c for c in corpus.cases if c.id == case_id), None)
    if case is None:
        raise UsageError(f"--case {case_id}: no such case; see `nox -s matrix -- --list`")
    if check not in case.checks:
        raise UsageError(f"--check {check}: {case.id} has {', '.join(case.checks)}")
    return case, check


def bisected(
    request: BisectRequest, start: str, python: str, own: AxisIndex | None = None
) -> list[str]:
    """The releases to bisect over: those on the index with a wheel for the Python
    (`python`, else this interpreter), from --good (default: the axis start, or on
    another Python the first release after it with a wheel for it) to --bad, on the
    user's indexes and the axis's `own`. A --good or --bad with no wheel for that
    Python is one line saying so, not an install error."""
    from compat.core.install import InstallRequest
    from compat.core.versions import version_key
    from compat.plan.index import USERS, missing_wheel, releases

    package = request.package
    available = releases(package, request.pre, request.yanked, own or USERS, python)
    good = request.good or start
    if python and not request.good:
        good = next((v for v in available if version_key(start) <= version_key(v)), start)
    versions = [v for v in available if version_key(good) <= version_key(v)]
    if request.bad:
        versions = [v for v in versions if version_key(v) <= version_key(request.bad)]
    for flag, value in (("--good", good), ("--bad", request.bad)):
        if value and value not in available:
            pin = InstallRequest((f"{package}=={value}",))
            reason = missing_wheel(pin, python) if python else ""
            raise UsageError(
                f"{flag} {value}: {reason}; bisect on another --python, or between "
                f"releases with wheels for {python}"
                if reason
                else f"{flag} {value}: not an installable release of {package}"
                + _like(value, available)
            )
    return versions


def _like(value: str, available: list[str]) -> str:
    """The releases a short `--good 1.18` may mean: bisect needs one exact release."""
    meant = [v for v in available if v.startswith(f"{value}.")]
    return f"; give one exact release, like {', '.join(meant[:3])}" if meant else ""


def partner_from_with(
    package: str, pairs: tuple[str, str], fixed: tuple[str, ...]
) -> tuple[tuple[str, str], tuple[str, ...]]:
    """`--with` exact pins of the other package replace its pair (`bisect --package onnx
    --with onnxruntime==1.24.4` runs every onnx release with onnxruntime 1.24.4); one of
    the bisected package is a usage error. Returns the pairs and the other pins."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    partner = "onnxruntime" if package == "onnx" else "onnx"
    kept = []
    for pin in fixed:
        req = Requirement(pin)
        name = canonicalize_name(req.name)
        if name == package:
            chooses = f"bisect --package {package} chooses {package}'s release itself"
            raise UsageError(f"--with {pin}: {chooses}; pin the other package, or none")
        if name != partner:
            kept.append(pin)
            continue
        version = next(iter(req.specifier)).version
        pairs = (version, pairs[1]) if partner == "onnx" else (pairs[0], version)
    return pairs, tuple(kept)


def run(request: BisectRequest) -> int:
    # the pipeline is imported when the command runs: `bisect --help` stays quick
    from compat.core.outcomes import CellState
    from compat.corpus.discover import write_case
    from compat.execute.run import run_cell
    from compat.followup.bisection import bisect
    from compat.followup.on_python import follow_up_python
    from compat.plan.config import load_config
    from compat.plan.matrix import make_cell
    from compat.plan.pairs import follow_pairs
    from compat.workflow.corpus import load_corpus
    from compat.workflow.plan import follow_axes
    from compat.workflow.project import fixed_requirements, prepare_project, project_config
    from compat.workflow.settings import settings_of

    common = request.common
    package = request.package
    config = load_config(common.config)
    case, check = chosen(request, load_corpus(common, config))
    config, _ = follow_axes(common, config)
    python = follow_up_python(common, config, "bisect")
    axis = config.onnx if package == "onnx" else config.onnxruntime
    versions = bisected(request, axis.versions[0], python, axis.index)
    on = f" on CPython {python}" if python else ""
    print(f"bisecting {len(versions)} {package} releases{on}: {', '.join(versions)}")
    # each axis's pair: the config's, or on another Python the newest with a wheel for it
    pairs = (config.onnx.pair, config.onnxruntime.pair)
    if python:
        pairs = follow_pairs(config, (python,), config.onnx.versions, config.onnxruntime.versions)[
            python
        ]
    settings = settings_of(common, config)
    prepare_project(common, config)  # the project a --run command imports, and its setup
    config = project_config(common, config)
    pairs, fixed = partner_from_with(package, pairs, fixed_requirements(common))
    only = write_case(
        replace(
            case,
            builtin_checks=tuple(c for c in case.builtin_checks if c == check),
            custom_checks=tuple(c for c in case.custom_checks if c.name == check),
        ),
        settings.work_dir / "cases",
    )

    def probe(version: str) -> str | None:
        onnx, ort = (version, pairs[0]) if package == "onnx" else (pairs[1], version)
        cell = make_cell(config, onnx, ort, (), fixed, python=python, show_python=bool(python))
        ran = run_cell(cell, [only], settings)
        if ran.record.state is CellState.NO_WHEEL:  # decided from the index: one line
            print(f"  {version}: {ran.record.state.value}, skipped: {ran.record.summary}")
            return None
        if ran.record.state is not CellState.READY:
            print(f"  {version}: {ran.record.state.value}, skipped")
            return None
        (result,) = [r for r in ran.results if r.check == check]
        print(f"  {version}: {result.outcome.value} {result.detail[:120]}", flush=True)
        return result.outcome.value

    found = bisect(versions, probe)
    print(
        f"tested {len(found.tested)} of {len(versions)} releases "
        f"(bound ⌈log2(n)⌉+2 = {found.bound}): {', '.join(found.tested)}"
    )
    print(found.verdict())
    return 0
