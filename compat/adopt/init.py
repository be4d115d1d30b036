"""`onnx-compat init`: adopt onnx-compat in a project, reading the project, never
overwriting. In order: `[tool.compat]` in pyproject.toml (its axes from the project's
declared onnx / onnxruntime ranges, its Pythons from requires-python and the interpreters
installed here, its test dependencies, its test command), the nox
sessions, the `.gitignore` entries and, with `--ci github`, a workflow. Each file that
has what `init` would write is left as it is, and the output says so, one line per file;
each other is checked before anything is written (no write through a link, no file
that cannot be read or written) and replaced whole, its new text read back first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from compat.adopt.axes import choose_axes
from compat.adopt.ci import default_branch, workflow_edits
from compat.adopt.declared import declared_test_sets, ranges_of, set_requirements
from compat.adopt.files import gitignore_edit, template, toml_list
from compat.adopt.guess import guess_requires, imported_modules, local_modules, looks_like_pytest
from compat.adopt.pins import Clash, pair_fits
from compat.adopt.pyproject import NAME, check_appended, has_tool_compat, load
from compat.adopt.python_axis import NO_AXIS, PythonAxis, choose_python_axis
from compat.adopt.sessions import installed as noxfile_installs
from compat.adopt.sessions import noxfile_edit, session_python
from compat.adopt.testsource import declared_commands, suite, suite_runs
from compat.adopt.writes import Edit, apply, check_writable, read_text, shown
from compat.core.errors import UsageError
from compat.plan.index import on_index as index_has
from compat.plan.index import releases as index_releases
from compat.plan.pythons import installed as installed_pythons

#: what the sessions install unless `--install` says otherwise
DEFAULT_INSTALL = "onnx-compat"


@dataclass(frozen=True)
class InitOptions:
    """What `onnx-compat init` was asked for."""

    #: `--install`: what the sessions and the workflow install; None: not given, the
    #: release of the package index (a given one also changes init's noxfile line)
    install: str | None = None
    models: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    ci: str | None = None
    shards: int = 4
    #: `--python`: the Pythons every cell runs on (`3.10,3.12`, `none`); None: the
    #: installed ones requires-python allows, when two or more
    python: str | None = None
    #: `--watch`: the weekly watch of new releases beside the CI workflow
    watch: bool = False
    #: `--branch`: the branch whose pushes run the workflow; None: read from git
    branch: str | None = None
    #: `--gate`: what fails a pull request in the workflow (compat/adopt/ci.py GATES)
    gate: str = "unexpected"

    @property
    def installs(self) -> str:
        """What the sessions and the workflow install."""
        return DEFAULT_INSTALL if self.install is None else self.install


@dataclass(frozen=True)
class SuiteSetup:
    """How the cells run the project's tests: the `run` entries, and the test
    dependencies as `requires`, `groups` or `extras`, with what `init` says of them."""

    runs: list[str]
    requires: list[str]
    groups: list[str]
    extras: list[str]
    said: list[str]

    def toml(self) -> str:
        """The lines of [tool.compat] naming the test dependencies."""
        if self.groups:
            return f"groups = [{toml_list(self.groups)}]  # installed in every cell"
        if self.extras:
            return f"extras = [{toml_list(self.extras)}]  # installed in every cell"
        note = "  # test dependencies, resolved per cell" if self.requires else ""
        return f"requires = [{toml_list(self.requires)}]{note}"

    def values(self) -> dict[str, list[str]]:
        """What [tool.compat] holds of it, as tomllib reads it back."""
        if self.groups:
            return {"run": self.runs, "groups": self.groups}
        if self.extras:
            return {"run": self.runs, "extras": self.extras}
        return {"run": self.runs, "requires": self.requires}


def read_tests(
    project: Path,
    pyproject: dict[str, Any],
    runs: list[str],
    on_index: Callable[[str], bool | None] = index_has,
) -> SuiteSetup:
    """The test command (unless `runs` are given) and test dependencies: a declared
    test group or extra when there is one, else a guess from every test file's imports
    (tests/, test/, and the tests beside the code under src/)."""
    found = suite(project)
    files = found.files
    groups, extras = declared_test_sets(pyproject)
    declared = declared_commands(project, pyproject)
    if not files and not declared:
        return SuiteSetup(runs, [], groups, extras, found.said)
    imports = imported_modules(files)
    own = str(pyproject.get("project", {}).get("name", project.name))
    guessed = guess_requires(imports, local_modules(project, files), own)
    not_dists = [d for d in guessed if on_index(d) is False]  # written by the tests, say
    guessed = [d for d in guessed if d not in not_dists]
    pytest = any(c.command.startswith("pytest") for c in declared) or (
        not declared and looks_like_pytest(files, imports, pyproject)
    )
    plugins = [d for c in declared for d in c.plugins()]
    wanted = [*guessed, *plugins, *(["pytest"] if pytest else [])]
    guessed = sorted(dict.fromkeys(wanted), key=str.lower)
    where = ", ".join(f"{f}/" for f in found.folders) or "the project"
    said = [f"tests: {len(files)} file{'s' * (len(files) != 1)} in {where}", *found.said]
    if not_dists:
        reason = "imported by the tests, not on the package index"
        reason += " (made by the tests, or the project's own)"
        said.append(f"left out {', '.join(not_dists)}: {reason}")
    if groups or extras:
        named = f"group {groups[0]}" if groups else f"extra {extras[0]}"
        listed = set_requirements(pyproject, groups, extras)
        unlisted = [d for d in guessed if canonicalize_name(d) not in listed]
        also = f"; {where} also imports {', '.join(unlisted)}: add them to it or to `requires`"
        said.append(f"test dependencies: the project's {named}" + (also if unlisted else ""))
        guessed = []
    elif guessed:
        said.append(f"requires guessed from {where}: {', '.join(guessed)} — check it")
    else:
        said.append(f"requires: {where} imports nothing beyond onnx, onnxruntime and numpy")
    if not runs:
        runs, why = suite_runs(project, declared, pytest, found.folders)
        said += [f"run: {run}  ({w}; --run replaces it)" for run, w in zip(runs, why, strict=True)]
    return SuiteSetup(runs, guessed, groups, extras, said)


def tool_compat(
    cases_dirs: list[str],
    tests: SuiteSetup,
    axes_toml: dict[str, str],
    python: PythonAxis = NO_AXIS,
) -> str:
    """The `[tool.compat]` section: compat/resources/tool_compat.toml filled in."""
    filled = {
        "RUN": toml_list(tests.runs),
        "CASES_DIRS": toml_list(cases_dirs),
        "TEST_DEPENDENCIES": tests.toml(),
        "ONNX_AXIS": axes_toml["onnx"],
        "ORT_AXIS": axes_toml["onnxruntime"],
        "PYTHON_AXIS": python.toml(),
    }
    text = template("tool_compat.toml")
    for key, value in filled.items():
        text = text.replace(f"@{key}@", value)
    return text


def tool_compat_edit(
    project: Path,
    text: str,
    pyproject: dict[str, Any],
    options: InitOptions,
    releases: Callable[[str], list[str]],
    python: PythonAxis = NO_AXIS,
    on_index: Callable[[str], bool | None] = index_has,
    clash: Clash | None = None,
) -> Edit:
    """pyproject.toml (`text`, its values `pyproject`) with [tool.compat] appended,
    read back before it is written (compat/adopt/pyproject.py)."""
    tests = read_tests(project, pyproject, options.runs, on_index)
    ranges = ranges_of(pyproject)
    axes, said = choose_axes(ranges, releases, pair_fits(ranges, clash))
    added = tool_compat(options.models, tests, {a.package: a.toml() for a in axes}, python)
    whole = text + (added if text.endswith("\n") or not text else "\n" + added)
    check_appended(pyproject, whole, {"cases-dirs": options.models, **tests.values()})
    done = f"{NAME}: [tool.compat] {'appended' if text else 'written'}"
    more = [python.said] if python.said else []
    lines = [done, *(f"  {line}" for line in [*said, *more, *tests.said])]
    return Edit(Path(NAME), whole.encode(), lines)


def unlisted(project: Path, nox: Edit, on_index: Callable[[str], bool | None]) -> list[str]:
    """A warning when the noxfile installs onnx-compat by a name (`onnx-compat`, a pin)
    that the package index has no project of: its sessions would fail to install it."""
    text = nox.data.decode() if nox.data is not None else read_text(project, "noxfile.py")
    value = noxfile_installs(text)
    if value is None or value.endswith(".whl") or (project / value).exists():
        return []
    try:
        wanted = Requirement(value)
    except InvalidRequirement:
        return []
    if wanted.url or on_index(wanted.name) is not False:
        return []  # on the index, or it could not be asked
    return [
        f"warning: {wanted.name} is not on your package index, so `nox -s matrix` will fail "
        "to install it: run init again with --install PATH/TO/WHEEL (a wheel of onnx-compat)"
    ]


def init(
    project: Path,
    options: InitOptions,
    releases: Callable[[str], list[str]] = index_releases,
    installed: Callable[[], tuple[str, ...]] = installed_pythons,
    on_index: Callable[[str], bool | None] = index_has,
    clash: Clash | None = None,
    branch: Callable[[Path], tuple[str, str]] = default_branch,
) -> list[str]:
    """Writes what is missing; returns one line per file saying what was done (and the
    guesses to review), then the next command. Every file it would write is checked
    (compat/adopt/writes.py) before the package index is asked or any file written.

    Args:
        project: the project's root folder (its pyproject.toml, noxfile.py, .gitignore).
        options: what the user asked for.
        releases: the package index's releases with a wheel for this Python.
        installed: the CPython minor versions installed here (compat/plan/pythons.py).
        on_index: whether the package index has a distribution of that name (None:
            unknown), for the guessed test requirements.
        clash: why uv finds no solution for some requirements together (the pairs must
            install beside the project's own pins: compat/adopt/pins.py); None: unasked.
        branch: the project's default branch and where it was read (git), for the
            workflow's pushes, unless `--branch` names it.
    """
    text, pyproject = load(project)
    requires_python = str(pyproject.get("project", {}).get("requires-python", ""))
    python, note = session_python(requires_python)
    axis = choose_python_axis(requires_python, options.python, installed)
    nox = noxfile_edit(project, options.installs, python, options.install is not None)
    rest = [gitignore_edit(project)]
    if options.ci == "github":
        pushed = (options.branch, "--branch") if options.branch else branch(project)
        rest += workflow_edits(
            project,
            options.installs,
            python,
            options.shards,
            options.watch,
            pushed,
            options.gate,
        )
    has_it = has_tool_compat(text, pyproject)
    for edit in [nox, *rest, *([] if has_it else [Edit(Path(NAME), b"")])]:
        if edit.data is not None:
            check_writable(project, edit.path)
    if has_it:
        first = Edit(
            Path(NAME), None, [f"{NAME}: has a [tool.compat] section already; left as it is"]
        )
    else:
        first = tool_compat_edit(project, text, pyproject, options, releases, axis, on_index, clash)
    for edit in (first, nox, *rest):
        apply(project, edit)
    said = [*first.said, *nox.said, *([f"  sessions run {note}"] if note else [])]
    said += [line for edit in rest for line in edit.said]
    said += unlisted(project, nox, on_index)
    said.append("next: nox -s matrix   (reports in reports/: compatibility.md, matrix.html)")
    return said


def _check_given(flag: str, values: list[str], what: str) -> None:
    """A value of `flag` holds text a TOML file can hold, and no NUL (which no `what`
    can hold), else a one-line error before anything is written."""
    for value in values:
        if "\0" in value:
            raise UsageError(
                f"{flag} {shown(value)}: holds a NUL character, which no {what} can: remove it"
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(
                f"{flag} {shown(value)}: holds bytes that are not UTF-8 text, "
                "which a TOML file cannot hold: give it as UTF-8"
            ) from None


def _check_branch(branch: str | None) -> None:
    """A `--branch` value is a branch name git allows, else a one-line error."""
    if branch is None:
        return
    bad = [c for c in branch if c.isspace() or ord(c) < 32 or ord(c) == 127 or c in "~^:?*[\\"]
    if not branch or bad or branch.startswith(("-", "/")) or ".." in branch:
        raise UsageError(
            f"--branch {shown(branch)}: no branch name git allows (no spaces, ~^:?*[\\ or "
            "'..'): give the branch whose pushes run the workflow, like main"
        )


def cmd_init(options: InitOptions, clash: Clash | None = None) -> int:
    """`onnx-compat init`: adopts onnx-compat in the current folder; never overwrites.
    No `--models`: models/ when the project has one. `clash`: as `init`'s."""
    _check_given("--run", options.runs, "command")
    _check_given("--models", options.models, "path")
    _check_given("--install", [options.installs], "requirement or path")
    _check_branch(options.branch)
    project = Path.cwd()
    models = options.models or (["models"] if (project / "models").is_dir() else [])
    for folder in models:
        if not (project / folder).is_dir():
            raise UsageError(f"--models {shown(folder)}: no such folder here ({project})")
    if options.shards < 1:
        raise UsageError(f"--shards {options.shards}: give at least 1")
    for line in init(project, replace(options, models=models), clash=clash):
        print(line)
    return 0
