"""What the package index offers: the releases of a package with a wheel this
interpreter can install (bisect's range, the axes that follow the index, `weekly`)."""

from __future__ import annotations

import json
import urllib.request

from packaging.tags import Tag, sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from compat.errors import CompatError

INDEX_JSON = "https://pypi.org/pypi/{package}/json"


def _has_wheel_for(files: list[dict[str, object]], tags: set[Tag]) -> bool:
    for f in files:
        name = str(f.get("filename", ""))
        if not name.endswith(".whl") or f.get("yanked"):
            continue
        try:
            _, _, _, wheel_tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        if wheel_tags & tags:
            return True
    return False


def releases(package: str, pre: bool = False, yanked: bool = False) -> list[str]:
    """Releases of `package` on the index with a wheel this interpreter can install."""
    try:
        with urllib.request.urlopen(INDEX_JSON.format(package=package), timeout=60) as answer:
            data = json.load(answer)
    except OSError as exc:
        raise CompatError(f"cannot list {package} releases from the package index: {exc}") from None
    tags = set(sys_tags())
    found = []
    for text, files in data.get("releases", {}).items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version.is_prerelease and not pre:
            continue
        usable = [f for f in files if yanked or not f.get("yanked")]
        if _has_wheel_for(usable, tags):
            found.append(text)
    return sorted(found, key=Version)
