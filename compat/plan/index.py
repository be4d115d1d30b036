"""What the package index offers: the releases of a package with a wheel this
interpreter can install (bisect's range, the axes that follow the index, `weekly`), and
whether a pinned release has a wheel for a Python (no-wheel cells). The index is the one
the user's installs use (compat/plan/index_config.py reads uv's and pip's settings), its
pages read by compat/plan/simple.py; this module is the one that answers."""

from __future__ import annotations

import functools

from packaging.tags import Tag, compatible_tags, cpython_tags, platform_tags, sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from compat.core.errors import CompatError, UsageError
from compat.core.install import InstallRequest
from compat.plan.index_config import AxisIndex, Indexes, configured, with_axis
from compat.plan.pythons import KNOWN
from compat.plan.simple import Files, project_files

#: no index of an axis's own: the user's indexes alone
USERS = AxisIndex()


def indexes(package: str, own: AxisIndex = USERS) -> Indexes:
    """The indexes `package` is installed from: the user's (compat/plan/index_config.py),
    with an axis's own `index-url` in place of the default one and its
    `extra-index-url` before them."""
    return with_axis(configured(), own, f"[tool.compat.{package}]")


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
    package: str, pre: bool = False, yanked: bool = False, own: AxisIndex = USERS, python: str = ""
) -> list[str]:
    """Releases of `package` on the index with a wheel this interpreter (or CPython
    `python`, `3.12`) can install: on the user's indexes, with an axis's `own`.
    The index is asked once per process for the same package and indexes."""
    return list(_releases(package, pre, yanked, own, python))


def on_index(package: str) -> bool | None:
    """Whether the package index has a project named `package` (None: it could not be
    asked): an import name that is no distribution (a module the tests write, a
    helper beside them) is not a requirement."""
    try:
        return _listing(package, indexes(package)) is not None
    except CompatError:
        return None


@functools.lru_cache(maxsize=256)
def _listing(package: str, asked: Indexes) -> Files | None:
    """Every release of `package` and its files on the indexes `asked` (None: on none of
    them), asked once per process for the same indexes: the first index that has the
    project, as uv's `first-index` strategy, else all of them merged."""
    merged: Files | None = None
    for source in asked.sources:
        found = project_files(package, source)
        if found is None:
            continue
        if asked.first_only:
            return found
        merged = merged or {}
        for version, files in found.items():
            merged.setdefault(version, []).extend(files)
    return merged


def _files(package: str, own: AxisIndex) -> Files:
    """Every release of `package` and its files, on the index its installs use."""
    asked = indexes(package, own)
    found = _listing(package, asked)
    if found is None:
        where = ", ".join(f"{s.shown} (from {s.where})" for s in asked.sources)
        raise CompatError(f"cannot list {package} releases from {where}: no such project there")
    return found


def _releases(
    package: str, pre: bool, yanked: bool, own: AxisIndex, python: str
) -> tuple[str, ...]:
    tags = set(python_tags(python)) if python else set(sys_tags())
    found = []
    for text, files in _files(package, own).items():
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


#: the indexes that could not be asked about a package, in this process
_UNREACHABLE: set[tuple[str, Indexes]] = set()


def _release(package: str, version: str, own: AxisIndex) -> list[dict[str, object]] | None:
    """The files of one release (its version as written or normalised: `1.18` is
    `1.18.0`); None when the index cannot be asked or has no such release."""
    key = (package, indexes(package, own))
    if key in _UNREACHABLE:
        return None
    try:
        listing = _files(package, own)
    except CompatError:
        _UNREACHABLE.add(key)  # asked once: every cell would wait again
        return None
    try:
        normal = str(Version(version))
    except InvalidVersion:
        return None
    return listing.get(version, listing.get(normal))


@functools.cache
def python_tags(python: str) -> frozenset[Tag]:
    """The wheel tags CPython `python` (`3.12`) installs on this machine's platform, as
    pip and uv rank them: its own ABI, abi3 of any earlier CPython, pure Python."""
    version = tuple(int(part) for part in python.split("."))
    platforms = list(platform_tags())
    interpreter = f"cp{version[0]}{version[1]}"
    return frozenset(
        [
            *cpython_tags(version, platforms=platforms),
            *compatible_tags(version, interpreter=interpreter, platforms=platforms),
        ]
    )


def has_wheel(package: str, version: str, python: str, own: AxisIndex = USERS) -> bool | None:
    """Whether the index has a wheel of `package` `version` that CPython `python` installs
    here; None when the index cannot be asked or has no such release (the environment
    will say)."""
    files = _release(package, version, own)
    if files is None:  # no such release: not a question of wheels (the installer says)
        return None
    usable = [f for f in files if not f.get("yanked")] or files  # a pinned yanked file installs
    return _has_wheel_for(usable, set(python_tags(python)))


def only_sdists(package: str, version: str, own: AxisIndex = USERS) -> bool:
    """Whether the index has `package` `version` as source distributions alone, no wheel
    for any platform: uv builds it, so it is installable (a release with wheels, none for
    this Python, would be built from source the same way, which onnx's C++ is not)."""
    files = _release(package, version, own)
    return bool(files) and not any(str(f.get("filename", "")).endswith(".whl") for f in files or ())


def built_from_source(request: InstallRequest) -> tuple[str, ...]:
    """The exactly pinned packages of a cell's request whose release the index has only
    as sdists: uv is let build these (and only these of the cell's pins) from source."""
    own = AxisIndex(request.index_url, request.extra_index_urls)
    return tuple(name for name, version in request.exact() if only_sdists(name, version, own))


def wheel_pythons(
    package: str, version: str, pythons: tuple[str, ...], own: AxisIndex = USERS
) -> tuple[str, ...]:
    """Which of `pythons` the index has a wheel of `package` `version` for."""
    return tuple(p for p in pythons if has_wheel(package, version, p, own))


def check_on_index(
    versions: tuple[str, ...], package: str, flag: str, own: AxisIndex = USERS
) -> None:
    """Each release given on the command line is one the index has a wheel of, for this
    Python: a typo is one line now, not an environment that fails to build. An index that
    cannot be asked checks nothing (the environments will say)."""
    try:
        known = releases(package, pre=True, own=own)
    except CompatError:
        return
    for version in versions:
        if version not in known:
            newest = [v for v in known if not Version(v).is_prerelease][-3:]
            raise UsageError(
                f"{flag} {version}: the package index has no {package} {version} with a wheel "
                f"for this Python; its newest are {', '.join(newest) or 'none'}"
            )


def missing_wheel(request: InstallRequest, python: str) -> str:
    """Why a cell cannot exist on CPython `python`: the first exactly pinned release the
    index has no wheel of for it, said with the Pythons it has wheels for; "" when every
    pin has one (or is a release of sdists alone, which uv builds), or when the index
    cannot say (a cell with an index of its own, an index
    that cannot be asked: the environment is built and says)."""
    if not python or request.own_index:  # a cell's own index: not this one's
        return ""
    for name, version in request.exact():
        if has_wheel(name, version, python) is False and not only_sdists(name, version):
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
