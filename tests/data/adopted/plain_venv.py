"""Ground truth for an adopted project: its command in a plain uv venv, no onnx-compat.

    python plain_venv.py PROJECT --pin onnx==1.18.0 --pin onnxruntime==1.24.4 \
        [--with ml_dtypes] [--with pytest] [--python 3.11] [--venv DIR] -- pytest -q tests

What it does, nothing more: ``uv venv --python 3.11 DIR``; ``uv pip install PROJECT PINS
WITHS`` (the project built from its folder by its own backend, so setuptools-scm reads its
git tag); then runs the command in PROJECT with DIR/bin first on PATH and no other Python
environment on it (VIRTUAL_ENV, pyenv shims and other venvs' bin folders are dropped), so a
``pytest`` that is not in the venv is "command not found", never the host's copy.

Prints one JSON object on stdout:

    {"exit_code": 1, "summary": "2 failed, 40 passed in 1.23s",
     "failed": ["tests/test_x.py::test_a", ...], "installed": {"onnx": "1.18.0", ...},
     "install_seconds": 4.2, "run_seconds": 2.1, "install_error": null}

and, when pytest printed no summary line (a conftest that cannot import: exit 4),
``error_line``: its first ``E ...`` line.

``exit_code`` is the command's exit code, or null when the install failed (then
``install_error`` holds the resolver's message). ``failed`` lists the ids of pytest's
``FAILED``/``ERROR`` lines (pytest's default short summary shows both), in order.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# "== 2 failed, 40 passed, 1 warning in 1.23s ==" (default) or the same bare (-q)
_SUMMARY = re.compile(
    r"^=*\s*((?:\d+ \w+(?: \w+)?, )*\d+ \w+(?: \w+)?(?:, \d+ \w+)* in [\d.]+s(?: \([^)]*\))?)\s*=*$"
)
_NO_TESTS = re.compile(r"^=*\s*(no tests ran in [\d.]+s)\s*=*$")
_FAILED = re.compile(r"^(FAILED|ERROR) (.+?)(?: - .*)?$")


def clean_env(venv: Path) -> dict[str, str]:
    """The environment a plain activated venv would give, minus every other Python env."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYENV", "CONDA", "PYTHON"))}
    env.pop("VIRTUAL_ENV", None)
    keep = []
    for entry in env.get("PATH", "").split(os.pathsep):
        p = Path(entry)
        if not entry or ".pyenv" in p.parts or ".nox" in p.parts:
            continue
        if (p.parent / "pyvenv.cfg").exists():  # another venv's bin/
            continue
        keep.append(entry)
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *keep])
    env["VIRTUAL_ENV"] = str(venv)
    return env


def parse_pytest(output: str) -> tuple[str | None, list[str]]:
    summary = None
    failed: list[str] = []
    for line in output.splitlines():
        line = line.rstrip()
        m = _SUMMARY.match(line) or _NO_TESTS.match(line)
        if m:
            summary = m.group(1)
        f = _FAILED.match(line)
        if f:
            failed.append(f.group(2))
    return summary, failed


def installed(python: Path) -> dict[str, str]:
    out = subprocess.run(
        ["uv", "pip", "list", "--python", str(python), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return {d["name"]: d["version"] for d in json.loads(out.stdout)}
    except ValueError:
        return {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("project", type=Path)
    ap.add_argument("--pin", action="append", default=[], help="e.g. onnx==1.18.0 (repeat)")
    ap.add_argument(
        "--with",
        dest="withs",
        action="append",
        default=[],
        help="an extra requirement, range or name (repeat)",
    )
    ap.add_argument("--python", default="3.11")
    ap.add_argument("--venv", type=Path, help="keep the venv here (default: a temporary one)")
    ap.add_argument("--log", type=Path, help="write the command's full output here")
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        ap.error("give the command after --")
    cut = argv.index("--")
    args, cmd = ap.parse_args(argv[:cut]), argv[cut + 1 :]
    if not cmd:
        ap.error("give the command after --")
    project = args.project.resolve()

    tmp = None
    if args.venv is None:
        tmp = tempfile.mkdtemp(prefix="plain-venv-")
        venv = Path(tmp) / "venv"
    else:
        venv = args.venv.resolve()
    result: dict = {
        "project": str(project),
        "pins": args.pin,
        "with": args.withs,
        "cmd": cmd,
        "exit_code": None,
        "summary": None,
        "failed": [],
        "installed": {},
        "install_seconds": None,
        "run_seconds": None,
        "install_error": None,
    }
    try:
        t0 = time.monotonic()
        subprocess.run(
            ["uv", "venv", "-q", "--clear", "--python", args.python, str(venv)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        python = venv / "bin" / "python"
        inst = subprocess.run(
            [
                "uv",
                "pip",
                "install",
                "-q",
                "--python",
                str(python),
                str(project),
                *args.pin,
                *args.withs,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        result["install_seconds"] = round(time.monotonic() - t0, 1)
        result["installed"] = installed(python)
        if inst.returncode != 0:
            result["install_error"] = (inst.stderr or inst.stdout).strip()
            print(json.dumps(result, indent=1))
            return 0
        t1 = time.monotonic()
        run = subprocess.run(
            cmd, cwd=project, env=clean_env(venv), capture_output=True, text=True, check=False
        )
        result["run_seconds"] = round(time.monotonic() - t1, 1)
        output = run.stdout + run.stderr
        if args.log:
            args.log.write_text(output)
        result["exit_code"] = run.returncode
        result["summary"], result["failed"] = parse_pytest(output)
        if result["summary"] is None:  # e.g. "ImportError while loading conftest" (exit 4)
            first = next((ln for ln in output.splitlines() if ln.startswith("E ")), None)
            result["error_line"] = first.strip() if first else None
    except FileNotFoundError as exc:  # the command itself is not in the venv
        result["exit_code"] = 127
        result["summary"] = f"command not found: {exc.filename}"
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
