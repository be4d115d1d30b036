"""uv, the installer every cell's environment is made with: finding it, the commands
and arguments a cell's install request becomes (`install_args`: the one place its fields
become uv's flags), running them, and, when uv's resolver refuses a cell, its reason in
one line. Apart from compat/execute/envs.py (when an
environment is built or reused, and what it records) because this is what speaks uv's
language, flags in and messages out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from packaging.utils import canonicalize_name

from compat.core.errors import CompatError
from compat.core.install import InstallRequest, parse_requirement
from compat.plan.index_config import installer_env

INSTALL_TIMEOUT = 1800  # seconds; a first download of every release is slow, not this slow


def find_uv() -> str:
    """The uv binary: on PATH (nox puts the session's own first), else the `uv` package's."""
    found = shutil.which("uv")
    if found:
        return found
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except Exception:  # ImportError, or its own lookup failing on an odd sysconfig
        raise CompatError("uv not found; install it with `pip install uv`") from None


def install_args(request: InstallRequest) -> list[str]:
    """uv's arguments for a cell's install request: its pins, each folder installed
    editable, and the indexes of its axes. The project is no argument here: its wheel's
    dependencies are pins by now (compat/execute/envs.py `expanded`), and the wheel is
    installed after them (`install_commands`)."""
    args = list(request.pins)
    for path in request.editables:
        args += ["-e", str(path)]
    if request.index_url:
        args += ["--index-url", request.index_url]
    for url in request.extra_index_urls:
        args += ["--extra-index-url", url]
    return args


def install_commands(
    uv: str,
    base_python: str,
    directory: Path,
    python: Path,
    request: InstallRequest,
    wheel: Path | None,
    from_source: tuple[str, ...] = (),
) -> list[list[str]]:
    """uv's commands that build a cell's environment in `directory`: a venv of the base
    interpreter, the cell's request (wheels only, but for the pins in `from_source`,
    releases the index has as sdists alone, which uv builds), then the project's own
    wheel when the cell installs the project."""
    builds = ["--no-build"]
    if from_source:  # every other pin stays wheels only: onnx is never compiled by accident
        built = {canonicalize_name(n) for n in from_source}
        named = [r.name for r in request.requirements]
        kept = [n for n in named if canonicalize_name(n) not in built]
        builds = [f"--no-build-package={n}" for n in dict.fromkeys(kept)]
    steps = [
        [uv, "venv", "--quiet", "--no-python-downloads", "--python", base_python, str(directory)],
        [
            uv,
            "pip",
            "install",
            "--quiet",
            *builds,
            "--python",
            str(python),
            *install_args(request),
        ],
    ]
    if wheel is not None:  # the project's own wheel, after what it depends on
        steps.append(
            [uv, "pip", "install", "--quiet", "--no-deps", "--python", str(python), str(wheel)]
        )
    return steps


def resolver_reason(message: str, requirements: tuple[str, ...] = ()) -> str:
    """The resolver's reason in one line: uv's "Because onnx>=1.23.2 depends on
    protobuf>=6.31.1 ..." -> "onnx>=1.23.2 requires protobuf>=6.31.1, not
    protobuf==3.20.3" (the cell's own pin of that package, from `requirements`, the
    cell's pins); "" when there is none."""
    text = " ".join(message.replace("╰─▶", " ").split())
    dep = r"(\S+) depends on ([A-Za-z0-9_.-]+[<>=!~][^\s]*?),?"
    both = re.search(rf"Because {dep} and {dep} we can conclude", text)
    if both:  # two packages' requirements of a third clash: "… but onnxruntime>=1.32 requires …"
        a, a_needs, b, b_needs = both.groups()
        return f"{a} requires {a_needs}, but {b} requires {b_needs}"
    found = re.search(r"Because (\S+) depends on ([A-Za-z0-9_.-]+)([<>=!~][^\s]*?),? ", text)
    if found:
        who, name, spec = found.groups()
        # "... and you require numpy<2": the requirement it really clashes with
        clash = re.match(r"and you require ([A-Za-z0-9_.-]+[<>=!~][^\s,]*)", text[found.end() :])
        if clash and re.split(r"[<>=!~]", clash.group(1))[0].lower() == name.lower():
            return f"{who} requires {name}{spec}, but the cell requires {clash.group(1)}"
        pinned = [r for r in requirements if _pins_down(r, name)]
        return f"{who} requires {name}{spec}" + (f", not {pinned[0]}" if pinned else "")
    start = text.find("Because ")
    if start < 0:
        return ""
    sentence = text[start + len("Because ") :]
    if ", we can conclude" in sentence:
        sentence = sentence[: sentence.index(", we can conclude")]
    return sentence.rstrip(".")


def _pins_down(requirement: str, name: str) -> bool:
    """Whether the pin `requirement` names the package `name` with a range or a URL."""
    req = parse_requirement(requirement)
    same = canonicalize_name(req.name) == canonicalize_name(name)
    return same and bool(req.specifier or req.url)


def run_command(
    command: list[str], timeout: float, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """A command run to its end, its output captured as text: uv's steps, or the probe
    in a cell (`env` given); by default the host's environment without VIRTUAL_ENV."""
    if env is None:
        env = {**os.environ, **installer_env()}  # pip's index, when the plan honoured it
        env.pop("VIRTUAL_ENV", None)  # uv must target the cell, not the host session
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, check=False
    )


def clash(requirements: list[str], python: str = "") -> str:
    """Why uv's resolver finds no solution for `requirements` together (on CPython
    `python`, default this one), in one line; "" when it finds one, or cannot say (no
    uv, no index: the environments will)."""
    command = [find_uv(), "pip", "compile", "-", "--quiet", "--no-header"]
    command += ["--python-version", python] if python else []
    try:
        text = "\n".join(requirements)
        env = {**os.environ, **installer_env()}  # the index the plan asked
        done = subprocess.run(
            command, input=text, capture_output=True, text=True, timeout=120, check=False, env=env
        )
    except (OSError, subprocess.TimeoutExpired, CompatError):
        return ""
    if done.returncode == 0:
        return ""
    return resolver_reason(done.stderr, tuple(requirements))
