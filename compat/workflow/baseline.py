"""`--baseline`: the stored run a report is set against (compat/core/changes.py), read
from a reports folder, a matrix.json(.gz) file, or the results a git revision committed.

`git:REV` reads the committed results of the configured docs (`[tool.compat.docs]
results`, else `docs/matrix.json.gz`) as REV holds them (`git show REV:PATH`), in the
repository of the configuration file; `git:REV:PATH` names another file. Anything else
is a path. Bad input is one line naming the value and the fix.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from compat.core.changes import Changes, Source, attach, compare
from compat.core.errors import UsageError
from compat.core.report import Report, parse_json

if TYPE_CHECKING:
    from compat.plan.config import Config

#: Where the committed results are when the configuration names none.
COMMITTED = Path("docs/matrix.json.gz")
#: What `--baseline` takes, said in every error.
TAKES = "give a reports folder, a matrix.json(.gz) file, or git:REV (git:REV:PATH)"


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise UsageError(
            "--baseline git:…: git is not installed; install it, or " + TAKES
        ) from None


def committed_results(config: Config) -> Path:
    """Where a project commits the results `git:REV` reads: the configured docs'
    results, else COMMITTED beside the configuration file."""
    if config.docs is not None:
        return config.docs.results
    return config.source.parent / COMMITTED


def committed_path(config: Path | None) -> Path:
    """`committed_results`, relative to the configuration file's folder (as `git show`
    takes it)."""
    if config is None or not config.is_file():
        return COMMITTED
    from compat.plan.config import load_config

    found = committed_results(load_config(config))
    return Path(os.path.relpath(found.resolve(), config.resolve().parent))


def _from_git(given: str, config: Path | None) -> tuple[bytes, Source]:
    rev, _, path = given.removeprefix("git:").partition(":")
    root = (config or Path("pyproject.toml")).resolve().parent
    if not rev:
        raise UsageError(f"--baseline {given}: no revision; give one, like git:HEAD or git:v1.4.0")
    found = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if found.returncode != 0:
        raise UsageError(
            f"--baseline {given}: {rev!r} is no commit of the git repository at {root}; "
            "give a commit, tag or branch it has (git log, git tag)"
        )
    commit = found.stdout.decode().strip()
    file = Path(path) if path else committed_path(config)
    shown = _git(root, "show", f"{commit}:./{file.as_posix()}")
    if shown.returncode != 0:
        raise UsageError(
            f"--baseline {given}: {rev} has no {file} (git show {rev}:{file}); commit the "
            "results there, or name the file: git:REV:PATH"
        )
    return shown.stdout, Source(given, rev, f"commit {commit}, {file}")


def _from_path(given: str) -> tuple[bytes, Source]:
    path = Path(given)
    if path.is_dir():
        found = [p for p in (path / "matrix.json", path / "matrix.json.gz") if p.is_file()]
        if not found:
            raise UsageError(f"--baseline {given}: no matrix.json or matrix.json.gz in it; {TAKES}")
        path = found[0]
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"--baseline {given}: no such file or folder; {TAKES}") from None
    except OSError as exc:
        raise UsageError(f"--baseline {given}: cannot be read ({exc.strerror}); {TAKES}") from None
    digest = hashlib.sha256(data).hexdigest()[:12]
    return data, Source(given, given, f"{path}, sha256 {digest}")


def load_baseline(given: str, config: Path | None = None) -> tuple[Report, Source]:
    """The stored run `given` names and what it resolved to; UsageError, one line, for
    a value that names none (a missing file, a bad revision, a file that is no report)."""
    data, source = _from_git(given, config) if given.startswith("git:") else _from_path(given)
    try:
        report = parse_json(data)
    except (ValueError, KeyError) as exc:
        why = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise UsageError(f"--baseline {given}: not a matrix report ({why}); {TAKES}") from None
    started = str(report.run.get("started") or "")
    made_of = str(report.run.get("commit") or "")
    return report, Source(source.given, source.label, source.identity, started, made_of)


def commit_of(root: Path) -> str:
    """The project's commit a run is made of (`abc1234`, and "with changes" when tracked
    files differ from it), for a later run's "since …" to name; "" outside a checkout."""
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
        if head.returncode != 0:
            return ""
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git
        return ""
    changed = " with changes" if status.returncode == 0 and status.stdout.strip() else ""
    return head.stdout.strip() + changed


def with_baseline(report: Report, baseline: tuple[Report, Source] | None) -> Report:
    """`report` set against the loaded baseline and carrying the comparison; as it was
    without one."""
    if baseline is None:
        return report
    return attach(report, compare(baseline[0], report, baseline[1]))


def fail_on(mode: str, baseline: str | None) -> None:
    """`--fail-on new` needs a baseline to tell new from known: said before anything runs."""
    if mode == "new" and not baseline:
        raise UsageError(
            "--fail-on new: new since what? give --baseline (a reports folder, a "
            "matrix.json(.gz) file or git:REV), or drop --fail-on new"
        )


def gate(changes: Changes | None, unexpected: bool, mode: str) -> int:
    """The exit code: 1 for any unexpected result (`unexpected`), or with `new` only for
    those unexpected now and not in the baseline."""
    if mode == "new" and changes is not None:
        return 1 if changes.gated else 0
    return 1 if unexpected else 0
