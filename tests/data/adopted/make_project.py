"""Build a fresh copy of a real project for adoption tests: spox 0.18.2 (Quantco/spox).

    python tests/data/adopted/make_project.py DEST [--tests subset|all] [--layout git|sdist]
                                               [--sdist PATH]

spox is a pure-Python ONNX library: version from setuptools-scm, ``onnx>=1.13`` declared,
its test dependencies (pytest, onnxruntime, ml_dtypes) declared only in pixi.toml, a
pytest suite of 665 tests. README.md beside this file has the ground truth per release.

What DEST gets:

* the project's sdist from the package index (``pip download``, run by ``uv tool run``
  since a venv made by uv has no pip; sha256-checked; kept in
  ``$ONNX_COMPAT_ADOPTED_CACHE``, else ``$XDG_CACHE_HOME/onnx-compat/adopted``, so the
  download happens once per machine), extracted;
* ``--tests subset`` (default) keeps ``tests/__init__.py``, ``tests/conftest.py`` and the
  files in SUBSET, and deletes the other test files (3 files, 60 tests; a few seconds a
  cell); ``--tests all`` keeps the whole suite;
* ``--layout git`` (default): what a maintainer's checkout of the release tag holds. The
  three files setuptools writes into an sdist (PKG-INFO, setup.cfg with only
  ``[egg_info]``, ``src/spox.egg-info/``) are removed, which leaves exactly the upstream
  tree at tag 0.18.2; then ``git init``, one commit, tag ``0.18.2`` (the upstream tag
  name), so setuptools-scm gives version 0.18.2. ``--layout sdist``: the extracted sdist as
  it is (trimmed), no git: a plain folder whose version comes from PKG-INFO.

pyproject.toml is never touched. Prints DEST's path. Standard library + uv + git only.
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

NAME = "spox"
VERSION = "0.18.2"
TAG = "0.18.2"  # upstream tags are bare versions
SDIST = f"{NAME}-{VERSION}.tar.gz"
SHA256 = "e1f73429f5b21f297c6660d8a13b2534678139d25237de5c4776c11c60e19613"

# The kept tests: fast (about 1 s of pytest time), deterministic, and their verdict
# changes across releases on both axes (README.md, "Ground truth").
SUBSET = (
    "tests/test_function.py",  # fails on onnxruntime <= 1.17.3 and >= 1.31.0
    "tests/test_tensor.py",  # fails on onnx <= 1.18.0 (ml_dtypes types)
    "tests/test_initializer.py",  # fails on onnx <= 1.16.2
)
KEEP_ALWAYS = ("tests/__init__.py", "tests/conftest.py")
SDIST_ONLY = ("PKG-INFO", "setup.cfg", "src/spox.egg-info")

# a fixed identity and date, so the commit (and so the version string) is reproducible
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
        req = Path(tmp) / "req.txt"
        req.write_text(f"{NAME}=={VERSION} --hash=sha256:{SHA256}\n")
        # an sdist only (--no-binary), no dependencies; pip checks the hash. pip runs
        # from uv's tool cache: the interpreter running this script may have none
        subprocess.run(
            [
                fixture_files.find_uv(),
                "tool",
                "run",
                "--quiet",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--require-hashes",
                "-r",
                str(req),
                "-d",
                tmp,
            ],
            check=True,
        )
        got = Path(tmp) / SDIST
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


def trim_tests(dest: Path) -> None:
    keep = set(KEEP_ALWAYS) | set(SUBSET)
    tests = dest / "tests"
    for path in sorted(tests.rglob("*"), reverse=True):
        rel = path.relative_to(dest).as_posix()
        if path.is_file() and rel not in keep:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    missing = [p for p in keep if not (dest / p).is_file()]
    if missing:
        sys.exit(f"the sdist lacks {missing}")


def make_git(dest: Path) -> None:
    for rel in SDIST_ONLY:
        p = dest / rel
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    env = {**os.environ, **GIT_ENV}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=dest, env=env, check=True, stdout=subprocess.DEVNULL)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", f"{NAME} {VERSION} (tests trimmed for onnx-compat's adoption test)")
    git("tag", TAG)
    # every extracted file is committed (nothing hidden by the project's .gitignore)
    listed = subprocess.run(
        ["git", "ls-files"], cwd=dest, env=env, check=True, capture_output=True, text=True
    ).stdout.split()
    on_disk = [
        p for p in dest.rglob("*") if p.is_file() and ".git" not in p.relative_to(dest).parts
    ]
    if len(listed) != len(on_disk):
        sys.exit(f"git committed {len(listed)} of {len(on_disk)} files")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dest", type=Path, help="a folder that does not exist yet, or is empty")
    ap.add_argument("--tests", choices=("subset", "all"), default="subset")
    ap.add_argument("--layout", choices=("git", "sdist"), default="git")
    ap.add_argument("--sdist", type=Path, help=f"use this {SDIST} instead of downloading it")
    args = ap.parse_args(argv)
    dest = args.dest.resolve()
    if dest.exists() and any(dest.iterdir()):
        sys.exit(f"{dest} is not empty")
    sdist = fetch_sdist(args.sdist)
    dest.mkdir(parents=True, exist_ok=True)
    extract(sdist, dest)
    if args.tests == "subset":
        trim_tests(dest)
    if args.layout == "git":
        make_git(dest)
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
