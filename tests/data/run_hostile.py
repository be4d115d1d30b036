"""Runs a matrix of one hostile case in a real cell, for tests that kill the host:
`python run_hostile.py ENVS WORK CACHE CHECK [CHECK ...]` (cell onnx1.23.2-ort1.24.4)."""

from __future__ import annotations

import sys
from pathlib import Path

from compat.corpus.discover import Corpus
from compat.execute.progress import Progress
from compat.execute.run import Settings, run_matrix
from compat.plan.config import load_config
from compat.plan.matrix import expand
from tests.conftest import ROOT
from tests.helpers import hostile_case


def main(argv: list[str]) -> None:
    envs, work, cache, *checks = argv
    plan = expand(load_config(ROOT / "pyproject.toml"), ("1.23.2",), ("1.24.4",), cross=True)
    corpus = Corpus([hostile_case(*checks)], {"tiny": "hostile checks"})
    settings = Settings(
        Path(envs),
        Path(work),
        timeout=300,
        jobs=1,
        python=sys.executable,
        cache_dir=Path(cache),
        reruns=0,
    )
    run_matrix(plan, corpus, settings, Progress(1, live=False))


if __name__ == "__main__":
    main(sys.argv[1:])
