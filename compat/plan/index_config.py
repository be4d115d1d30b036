"""Which package indexes the user's installs use, read the way uv reads them, so the plan
asks the index the cells are installed from (a company mirror, not PyPI behind its back).

uv's order, highest first: its environment variables (`UV_DEFAULT_INDEX`, then the
deprecated `UV_INDEX_URL`; extra indexes `UV_INDEX`, then `UV_EXTRA_INDEX_URL`), then
its configuration files (`UV_CONFIG_FILE` alone when set, else the nearest `uv.toml` or
`pyproject.toml` with `[tool.uv]` from the working directory up, then the user's and the
system's `uv.toml`; `UV_NO_CONFIG` reads none): `[[index]]` tables (`default = true`
replaces PyPI, `explicit = true` ones serve pinned sources only and are left out),
`index-url` and `extra-index-url`, at the top or under `[pip]`. When uv names no index,
pip's `PIP_INDEX_URL` / `PIP_EXTRA_INDEX_URL` are honoured, and handed to uv as well
(`installer_env`), so plan and installs agree. Else PyPI. Extra indexes come before
the default one, as uv asks them (`UV_INDEX_STRATEGY` says whether the first index
that has a package is the only one asked, uv's default, or all are).
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from compat.core.errors import UsageError

PYPI = "https://pypi.org/simple"

#: the environment variables read here
_VARIABLES = (
    "UV_DEFAULT_INDEX",
    "UV_INDEX_URL",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX_STRATEGY",
    "UV_CONFIG_FILE",
    "UV_NO_CONFIG",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "HOME",
)


@dataclass(frozen=True)
class Source:
    """One index: its URL as configured (credentials and all), where that came from (an
    environment variable, a file), and its name (`[[index]] name`, `UV_INDEX=name=url`)."""

    url: str
    where: str
    name: str = ""

    @property
    def shown(self) -> str:
        """The URL without credentials, as every message prints it."""
        return shown(self.url)


@dataclass(frozen=True)
class Indexes:
    """The indexes asked for a package, in uv's order (extra indexes first, the default
    last), and whether only the first that has the package counts (`first-index`)."""

    sources: tuple[Source, ...]
    first_only: bool = True


def shown(url: str) -> str:
    """`url` without its user and password: what a message may print."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _env_list(name: str, value: str) -> list[Source]:
    """`UV_INDEX="internal=https://a/simple https://b/simple"`: space-separated, each
    URL optionally named."""
    found = []
    for item in value.split():
        named, eq, url = item.partition("=")
        if eq and "://" not in named:
            found.append(Source(url, name, named))
        else:
            found.append(Source(item, name))
    return found


def _read_toml(path: Path, table: str) -> dict[str, Any]:
    """The uv settings of one file: `uv.toml` as it is, `pyproject.toml`'s `[tool.uv]`
    (`{}` without one). A file uv could not read either is one line naming it."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read uv's settings ({exc.strerror})") from None
    return _parsed(path, table, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _parsed(path: Path, table: str, mtime: int, size: int) -> dict[str, Any]:
    """A settings file as it is now (keyed by its time and size: asked for every cell
    and Python, read once while it stays the same)."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(
            f"{path}: cannot read uv's settings ({exc}); fix the file, or set UV_NO_CONFIG=1"
        ) from None
    if table:
        data = data.get("tool", {}).get("uv", {}) if isinstance(data.get("tool"), dict) else {}
    return data if isinstance(data, dict) else {}


def config_files(cwd: Path, environ: dict[str, str]) -> list[Path]:
    """uv's configuration files, the one that wins first: UV_CONFIG_FILE alone, else the
    project's (the nearest uv.toml, or pyproject.toml with `[tool.uv]`), the user's and
    the system's."""
    if environ.get("UV_NO_CONFIG", "").lower() in {"1", "true", "yes", "on"}:
        return []
    if environ.get("UV_CONFIG_FILE"):
        return [Path(environ["UV_CONFIG_FILE"])]
    files: list[Path] = []
    for folder in (cwd, *cwd.parents):
        if (folder / "uv.toml").is_file():
            files.append(folder / "uv.toml")
            break
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _read_toml(pyproject, "tool.uv"):
            files.append(pyproject)
            break
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    user = Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "uv" / "uv.toml"
    dirs = [d for d in environ.get("XDG_CONFIG_DIRS", "").split(":") if d]
    systems = [Path(d) / "uv" / "uv.toml" for d in dirs] + [Path("/etc/uv/uv.toml")]
    files += [user] if user.is_file() else []
    files += [p for p in systems if p.is_file()][:1]  # the first system file only, as uv
    return files


def _file_sources(path: Path) -> tuple[list[Source], Source | None]:
    """The extra indexes and the default index one file names."""
    settings = _read_toml(path, "tool.uv" if path.name == "pyproject.toml" else "")
    where = str(path)
    extras: list[Source] = []
    default: Source | None = None
    tables = settings.get("index", [])
    for table in tables if isinstance(tables, list) else []:
        if not isinstance(table, dict) or not isinstance(table.get("url"), str):
            continue
        if table.get("explicit") or table.get("format") == "flat":
            continue  # only for packages pinned to it / a page of links, not an index
        source = Source(table["url"], where, str(table.get("name", "")))
        if table.get("default"):
            default = default or source
        else:
            extras.append(source)
    for scope in (settings.get("pip", {}), settings):  # `uv pip` reads [pip] first
        if not isinstance(scope, dict):
            continue
        if isinstance(scope.get("index-url"), str):
            default = default or Source(scope["index-url"], where)
        more = scope.get("extra-index-url", [])
        extras += [Source(url, where) for url in more if isinstance(url, str)]
    return extras, default


def configured(cwd: Path | None = None, environ: dict[str, str] | None = None) -> Indexes:
    """The indexes uv (or, when uv names none, pip) is configured to install from."""
    env = {k: (os.environ if environ is None else environ).get(k, "") for k in _VARIABLES}
    extras = _env_list("UV_INDEX", env["UV_INDEX"])
    extras += _env_list("UV_EXTRA_INDEX_URL", env["UV_EXTRA_INDEX_URL"])
    default = next(
        (Source(env[v], v) for v in ("UV_DEFAULT_INDEX", "UV_INDEX_URL") if env[v]), None
    )
    for path in config_files(cwd or Path.cwd(), env):
        more, named = _file_sources(path)
        extras += more
        default = default or named
    if default is None and not extras and (env["PIP_INDEX_URL"] or env["PIP_EXTRA_INDEX_URL"]):
        extras = _env_list("PIP_EXTRA_INDEX_URL", env["PIP_EXTRA_INDEX_URL"])
        default = Source(env["PIP_INDEX_URL"], "PIP_INDEX_URL") if env["PIP_INDEX_URL"] else None
    default = default or Source(PYPI, "PyPI, uv's default")
    strategy = env["UV_INDEX_STRATEGY"] or "first-index"
    return Indexes((*extras, default), strategy == "first-index")


@dataclass(frozen=True)
class AxisIndex:
    """An axis's own indexes (`index-url`, `extra-index-url` of [tool.compat.onnxruntime]:
    onnxruntime's nightlies live on another index), which its cells install from and its
    releases are listed from; empty for the user's indexes alone."""

    url: str = ""
    extras: tuple[str, ...] = ()


def with_axis(indexes: Indexes, own: AxisIndex, where: str) -> Indexes:
    """The indexes a cell with an axis's own `index-url` / `extra-index-url` installs
    from: uv's command-line flags replace the default index and add theirs before the
    rest."""
    sources = list(indexes.sources)
    if own.url:
        sources[-1] = Source(own.url, f"index-url of {where}")
    added = [Source(url, f"extra-index-url of {where}") for url in own.extras]
    return Indexes((*added, *sources), indexes.first_only)


def installer_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """What uv's environment needs so it installs from the index the plan asked: pip's
    settings, when they are the ones honoured, as uv's (uv itself reads none of pip's)."""
    indexes = configured(environ=environ)
    pip = [s for s in indexes.sources if s.where.startswith("PIP_")]
    found: dict[str, str] = {}
    if pip and pip[-1].where == "PIP_INDEX_URL":
        found["UV_DEFAULT_INDEX"] = pip[-1].url
    extras = " ".join(s.url for s in pip if s.where == "PIP_EXTRA_INDEX_URL")
    if extras:
        found["UV_INDEX"] = extras
    return found
