"""How the cells of a command run (`Settings`): the request's run options over the
config's defaults, under the state directory."""

from __future__ import annotations

import os
from pathlib import Path

from compat.execute.run import Settings
from compat.plan.config import Config
from compat.workflow.baseline import committed_results
from compat.workflow.request import Request


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


#: More runs of an unexpected result, when neither `--reruns` nor `reruns` says.
DEFAULT_RERUNS = 3


def settings_of(request: Request, config: Config) -> Settings:
    state = request.state_dir()
    asked = request.run
    return Settings(
        envs_dir=state / "envs",
        work_dir=state / "work",
        timeout=asked.timeout or config.timeout,
        jobs=asked.jobs,
        python=asked.python,
        cache_dir=state / "cache",
        fresh=asked.fresh,
        reruns=next(n for n in (asked.reruns, config.reruns, DEFAULT_RERUNS) if n is not None),
        tracebacks=asked.tracebacks,
        share=asked.share,
        command_timeout=config.command_timeout,
        memory=memory_limit(asked.memory, asked.jobs),
        logs_dir=asked.out.resolve() / "logs" if asked.out else None,
        trees_dir=state / "trees",
        written=committed(config),
    )


def committed(config: Config) -> tuple[Path, ...]:
    """The results onnx-compat's users commit into the project (the docs' stored runs,
    else docs/matrix.json.gz, where `--baseline git:REV` reads them): a new baseline
    committed changes no command's result, so it runs none again."""
    if config.docs is None:
        return (committed_results(config),)
    return tuple(config.docs.named().values())
