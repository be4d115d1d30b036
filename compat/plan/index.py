"""What the package index offers: the releases of a package with a wheel this
interpreter can install (bisect's range, the axes that follow the index, `weekly`)."""

from __future__ import annotations

import functools
import json
import urllib.request
from typing import Any

from packaging.tags import Tag, compatible_tags, cpython_tags, platform_tags, sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from compat.core.errors import CompatError, UsageError
from compat.plan.pythons import KNOWN

INDEX_JSON = "https://pypi.org/pypi/{package}/json"


def _pypi(package: str) -> dict[str, Any]:
    with urllib.request.urlopen(INDEX_JSON.format(package=package), timeout=60) as answer:
        data: dict[str, Any] = json.load(answer)
    return data


def _simple(package: str, index_url: str) -> dict[str, Any]:
    """PEP 691's JSON simple page of `package`, as PyPI's JSON API shapes its releases."""
    request = urllib.request.Request(
        f"{index_url.rstrip('/')}/{package}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        page = json.load(answer)
    found: dict[str, list[dict[str, object]]] = {}
    for entry in page.get("files", []):
        name = str(entry.get("filename", ""))
        try:
            version = str(parse_wheel_filename(name)[1])
        except InvalidWheelFilename:
            continue
        found.setdefault(version, []).append({"filename": name, "yanked": entry.get("yanked")})
    return {"releases": found}


def _has_wheel_for(files: list[dict[str, object]], tags: set[Tag]) -> bool:
    for f in files:
        name = str(f.get("filename", ""))
        if not name.endswith(".whl"):  # (yanked files: left out by the caller unless asked)
            continue
        try:
            _, _, _, wheel_tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        if wheel_tags & tags:
            return True
    return False


def releases(
    package: str, pre: bool = False, yanked: bool = False, index_url: str = "", python: str = ""
) -> list[str]:
    """Releases of `package` on the index with a wheel this interpreter (or CPython
    `python`, `3.12`) can install: PyPI's, or `index_url`'s (an axis's own index, read
    with the simple JSON API). Asked once per process for the same question."""
    return list(_releases(package, pre, yanked, index_url, python))


@functools.lru_cache(maxsize=256)
def on_index(package: str) -> bool | None:
    """Whether the package index has a project named `package` (None: it could not be
    asked): an import name that is no distribution (a module the tests write, a
    helper beside them) is not a requirement."""
    try:
        _files(package, "")
    except CompatError as exc:
        return False if "HTTP Error 404" in str(exc) else None
    return True


@functools.lru_cache(maxsize=64)
def _files(package: str, index_url: str) -> dict[str, list[dict[str, object]]]:
    """Every release of `package` and its files, asked once per process."""
    try:
        data = _simple(package, index_url) if index_url else _pypi(package)
    except (OSError, ValueError) as exc:
        where = index_url or "the package index"
        raise CompatError(f"cannot list {package} releases from {where}: {exc}") from None
    releases: dict[str, list[dict[str, object]]] = data.get("releases", {})
    return releases


@functools.lru_cache(maxsize=64)
def _releases(
    package: str, pre: bool, yanked: bool, index_url: str, python: str
) -> tuple[str, ...]:
    tags = set(python_tags(python)) if python else set(sys_tags())
    found = []
    for text, files in _files(package, index_url).items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version.is_prerelease and not pre:
            continue
        usable = [f for f in files if yanked or not f.get("yanked")]
        if _has_wheel_for(usable, tags):
            found.append(text)
    return tuple(sorted(found, key=Version))


#: (package, index) pairs the index could not be asked about, in this process
_UNREACHABLE: set[tuple[str, str]] = set()


@functools.cache
def python_tags(python: str) -> frozenset[Tag]:
    """The wheel tags CPython `python` (`3.12`) installs on this machine's platform, as
    pip and uv rank them: its own ABI, abi3 of any earlier CPython, pure Python."""
    version = tuple(int(part) for part in python.split("."))
    platforms = list(platform_tags())
    interpreter = f"cp{version[0]}{version[1]}"
    return frozenset([
        *cpython_tags(version, platforms=platforms),
        *compatible_tags(version, interpreter=interpreter, platforms=platforms),
    ])  # fmt: skip


def has_wheel(package: str, version: str, python: str, index_url: str = "") -> bool | None:
    """Whether the index has a wheel of `package` `version` that CPython `python` installs
    here; None when the index cannot be asked or has no such release (the environment
    will say)."""
    if (package, index_url) in _UNREACHABLE:
        return None
    try:
        files = _files(package, index_url).get(version)
    except CompatError:
        _UNREACHABLE.add((package, index_url))  # asked once: every cell would wait again
        return None
    if files is None:  # no such release: not a question of wheels (the installer says)
        return None
    usable = [f for f in files if not f.get("yanked")] or files  # a pinned yanked file installs
    return _has_wheel_for(usable, set(python_tags(python)))


def wheel_pythons(
    package: str, version: str, pythons: tuple[str, ...], index_url: str = ""
) -> tuple[str, ...]:
    """Which of `pythons` the index has a wheel of `package` `version` for."""
    return tuple(p for p in pythons if has_wheel(package, version, p, index_url))


def check_on_index(versions: tuple[str, ...], package: str, flag: str, index_url: str = "") -> None:
    """Each release given on the command line is one the index has a wheel of, for this
    Python: a typo is one line now, not an environment that fails to build. An index that
    cannot be asked checks nothing (the environments will say)."""
    try:
        known = releases(package, pre=True, index_url=index_url)
    except CompatError:
        return
    for version in versions:
        if version not in known:
            newest = [v for v in known if not Version(v).is_prerelease][-3:]
            raise UsageError(
                f"{flag} {version}: the package index has no {package} {version} with a wheel "
                f"for this Python; its newest are {', '.join(newest) or 'none'}"
            )


def missing_wheel(requirements: tuple[str, ...], python: str) -> str:
    """Why a cell cannot exist on CPython `python`: the first exactly pinned release the
    index has no wheel of for it, said with the Pythons it has wheels for; "" when every
    pin has one, or when the index cannot say (a cell with an index of its own, an index
    that cannot be asked: the environment is built and says)."""
    indexes = ("--index-url", "--extra-index-url")  # a cell's own index: not this one's
    if not python or any(r.startswith(indexes) for r in requirements):
        return ""
    for requirement in requirements:
        name, exact, version = requirement.partition("==")
        if not exact or ";" in requirement or "[" in name:
            continue
        if has_wheel(name, version, python) is False:
            others = wheel_pythons(name, version, KNOWN)  # the Pythons a message lists
            has = (
                f"wheels for {', '.join(others)}"
                if others
                else "no CPython wheel for this platform"
            )
            return (
                f"{name} {version} has no wheel for CPython {python} on this platform "
                f"({has}): not installable there, by the package index"
            )
    return ""
