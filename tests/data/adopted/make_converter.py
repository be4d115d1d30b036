"""Build a fresh copy of a real converter library for adoption benches: onnxconverter-common
1.14.0 (microsoft/onnxconverter-common).

    python tests/data/adopted/make_converter.py DEST [--layout git|sdist] [--sdist PATH]

onnxconverter-common is the helper library under onnxmltools, skl2onnx and tf2onnx: pure
Python, a setuptools build whose version is dynamic from an attribute
(``[tool.setuptools.dynamic] version = {attr = "onnxconverter_common.__version__"}``),
``requires-python = ">=3.8"``, dependencies ``numpy``, ``onnx``, ``packaging`` and an
exact ``protobuf==3.20.2``, no extras and no dependency groups. Its suite is 12
unittest-style files under ``tests/`` (pytest collects them; its CI runs ``pytest tests
--doctest-modules``); they import onnxruntime, which nothing declares, and
``tests/test_onnx2py.py`` writes ``tests/temp/*.py`` into the tree and deletes them in
its tearDown.

What DEST gets:

* the project's sdist from the package index (``pip download --no-deps --no-binary
  :all:``, run by ``uv tool run`` since a venv made by uv has no pip; sha256-checked;
  kept in ``$ONNX_COMPAT_ADOPTED_CACHE``, else ``$XDG_CACHE_HOME/onnx-compat/adopted``
  (``~/.cache`` when unset), so the download happens once per machine), extracted,
  every test kept;
* ``--layout git`` (default): what a maintainer's checkout holds, as far as the sdist
  has it. The files setuptools writes into an sdist are undone: ``PKG-INFO`` and
  ``onnxconverter_common.egg-info/`` (not in the upstream tree) are removed, and the
  ``[egg_info]`` section setuptools appended to ``setup.cfg`` is cut, which leaves the
  upstream ``setup.cfg`` byte for byte (checked). Every other file is the upstream
  tree's at tag v1.14.0, byte for byte. Then ``git init``, one commit with a fixed
  author and date (so always the same commit), tag ``v1.14.0`` (the upstream tag name).
  ``--layout sdist``: the extracted sdist as it is, no git.

What the sdist lacks of the upstream tree at v1.14.0, and so DEST lacks: ``.gitignore``
(upstream ignores ``build/``, ``*.egg-info/``, ``.pytest_cache/``), ``.flake8``, the CI
files (``.azure-pipelines/``, ``.github/``), ``update_ops.py``, and the test data: the
six models of ``tests/data/`` and ``tests/coreml_OneHotEncoder_BikeSharing.onnx``. The
tests that load them fail on every release with ``FileNotFoundError`` (or onnx's
"No such file"): a floor of failing ids common to every cell, as for a user who
adopts the project from its sdist. Only the package index is reachable here, so the
data cannot be fetched.

Without a ``.gitignore``, a build in the tree (setuptools writes ``build/`` and
``onnxconverter_common.egg-info/`` beside the sources) leaves untracked files that
git does not ignore: what the project's tree is to a tool that reads git changes with
the first build. pyproject.toml is never touched. Prints DEST's path. Standard library
+ uv + git only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/data: fixture_files
import fixture_files
from fixture_files import sha256

NAME = "onnxconverter-common"
VERSION = "1.14.0"
TAG = "v1.14.0"  # upstream tags are v-prefixed
SDIST = f"{NAME}-{VERSION}.tar.gz"
SHA256 = "6e431429bd15325c5b2c3eab61bed0d5634c23ed58f8823961be448d629d014a"
#: the files setuptools adds to an sdist that the upstream tree does not have
SDIST_ONLY = ("PKG-INFO", "onnxconverter_common.egg-info")
#: setup.cfg at tag v1.14.0; the sdist's is this plus setuptools' [egg_info] section
SETUP_CFG = "[bdist_wheel]\nuniversal = 1\n\n[easy_install]\n"

# a fixed identity and date, so the commit is the same on every machine
GIT_ENV = {
    "GIT_AUTHOR_NAME": "adopted fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "adopted fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00+00:00",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def cache_dir() -> Path:
    return fixture_files.cache_dir("adopted", "ONNX_COMPAT_ADOPTED_CACHE")


def download(into: str) -> Path:
    """The sdist, downloaded into `into` by pip (from uv's tool cache: the interpreter
    running this script may have no pip), its hash checked by pip."""
    req = Path(into) / "req.txt"
    req.write_text(f"{NAME}=={VERSION} --hash=sha256:{SHA256}\n")
    pip = [fixture_files.find_uv(), "tool", "run", "--quiet", "pip", "download", "-q"]
    only = ["--no-deps", "--no-binary", ":all:", "--require-hashes", "-r", str(req)]
    subprocess.run([*pip, *only, "-d", into], check=True)
    return Path(into) / SDIST


def fetch_sdist(given: Path | None) -> Path:
    """The verified sdist: the given file, the cached one, or a fresh download."""
    if given is not None:
        if sha256(given) != SHA256:
            sys.exit(f"{given}: sha256 is not {SHA256}")
        return given
    cached = cache_dir() / SDIST
    if cached.is_file() and sha256(cached) == SHA256:
        return cached
    cached.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        got = download(tmp)
        if sha256(got) != SHA256:
            sys.exit(f"downloaded {SDIST}: sha256 is not {SHA256}")
        part = cached.with_suffix(".part")
        shutil.copyfile(got, part)
        part.replace(cached)
    return cached


def extract(sdist: Path, dest: Path) -> None:
    top = f"{NAME}-{VERSION}/"
    with tarfile.open(sdist) as tar:
        members = []
        for m in tar.getmembers():
            if not m.name.startswith(top) or not (m.isfile() or m.isdir()):
                continue
            m.name = m.name[len(top) :]
            if m.name:
                members.append(m)
        if hasattr(tarfile, "data_filter"):  # 3.11.4+
            tar.extractall(dest, members=members, filter="data")
        else:
            tar.extractall(dest, members=members)


def upstream_tree(dest: Path) -> None:
    """Undo what setuptools added to the sdist: the upstream tree's files are left."""
    for rel in SDIST_ONLY:
        p = dest / rel
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    cfg = dest / "setup.cfg"
    text = cfg.read_text()
    cut = text.find("\n[egg_info]")
    if cut >= 0:
        text = text[:cut]
    if text != SETUP_CFG:
        sys.exit(f"setup.cfg is not upstream's once [egg_info] is cut: {text!r}")
    cfg.write_text(text)


def make_git(dest: Path) -> None:
    upstream_tree(dest)
    env = {**os.environ, **GIT_ENV}

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=dest, env=env, check=True, capture_output=True, text=True
        )
        return done.stdout

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", f"{NAME} {VERSION} (its sdist, as onnx-compat's bench adopts it)")
    git("tag", TAG)
    # every extracted file is committed (the sdist has no .gitignore to hide one)
    listed = git("ls-files").split()
    on_disk = [
        p for p in dest.rglob("*") if p.is_file() and ".git" not in p.relative_to(dest).parts
    ]
    if len(listed) != len(on_disk):
        sys.exit(f"git committed {len(listed)} of {len(on_disk)} files")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("dest", type=Path, help="a folder that does not exist yet, or is empty")
    ap.add_argument("--layout", choices=("git", "sdist"), default="git")
    ap.add_argument("--sdist", type=Path, help=f"use this {SDIST} instead of downloading it")
    args = ap.parse_args(argv)
    dest = args.dest.resolve()
    if dest.exists() and any(dest.iterdir()):
        sys.exit(f"{dest} is not empty")
    sdist = fetch_sdist(args.sdist)
    dest.mkdir(parents=True, exist_ok=True)
    extract(sdist, dest)
    if args.layout == "git":
        make_git(dest)
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
