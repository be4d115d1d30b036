"""A project's page on one package index, its files grouped by release: PEP 691's JSON
simple API, else PEP 503's HTML (private mirrors, devpi, Artifactory, a folder served by
`python -m http.server` often serve only that), asked with the credentials uv would send
(the URL's own, `UV_INDEX_<NAME>_USERNAME` / `_PASSWORD`, then netrc for the host).
Credentials never appear in a message."""

from __future__ import annotations

import base64
import json
import netrc
import os
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from compat.core.errors import CompatError
from compat.plan.index_config import Source

#: JSON first, HTML for the indexes that serve only that (PEP 691's negotiation)
ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)
TIMEOUT = 60  # seconds; a large project's page (onnxruntime: thousands of files) is slow

#: a release's files: `{"filename": ..., "yanked": ...}` each
Files = dict[str, list[dict[str, object]]]


class _Anchors(HTMLParser):
    """PEP 503's page: each anchor a file, its text the file name, `data-yanked` if so."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[dict[str, object]] = []
        self._href: dict[str, str | None] | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs)
            self._text = ""

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            href = self._href.get("href") or ""
            name = self._text.strip() or unquote(urlsplit(href).path.rsplit("/", 1)[-1])
            yanked = self._href.get("data-yanked")
            self.files.append({"filename": name, "yanked": yanked if yanked is not None else False})
            self._href = None


def release_of(filename: str, package: str) -> str | None:
    """The release a file of `package` belongs to (a wheel or an sdist), or None for
    another project's file or one of no known kind."""
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return str(version) if name == canonicalize_name(package) else None


def _credentials(source: Source) -> tuple[str, str | None]:
    """The page's URL without credentials, and the Basic authorization uv would send."""
    parts = urlsplit(source.url)
    user = parts.username
    password = parts.password
    if user is None and source.name:
        key = re.sub(r"[^A-Za-z0-9]", "_", source.name).upper()
        user = os.environ.get(f"UV_INDEX_{key}_USERNAME")
        password = os.environ.get(f"UV_INDEX_{key}_PASSWORD", password)
    if user is None and parts.hostname:
        path = Path(os.environ.get("NETRC") or Path.home() / ".netrc")
        try:
            found = (
                netrc.netrc(str(path)).authenticators(parts.hostname) if path.is_file() else None
            )
        except (OSError, netrc.NetrcParseError):
            found = None  # as uv: an unreadable netrc is no credentials
        if found:
            user = found[0]
            password = found[2]
    url = urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]))
    if user is None:
        return url, None
    token = base64.b64encode(f"{unquote(user)}:{unquote(password or '')}".encode()).decode()
    return url, f"Basic {token}"


def _parse(body: bytes, content_type: str) -> list[dict[str, object]]:
    """The files of a project page, JSON or HTML (told by its type, or by its first byte
    when a plain file server calls every page text/html)."""
    if "json" in content_type or body.lstrip()[:1] == b"{":
        page = json.loads(body)
        return [
            {"filename": str(f.get("filename", "")), "yanked": f.get("yanked", False)}
            for f in page.get("files", [])
            if isinstance(f, dict)
        ]
    parser = _Anchors()
    parser.feed(body.decode("utf-8", errors="replace"))
    return parser.files


def project_files(package: str, source: Source) -> Files | None:
    """Every release of `package` on the index `source` and its files; None when the
    index has no such project (404: the next index is asked, as uv does)."""
    url, authorization = _credentials(source)
    page = f"{url.rstrip('/')}/{canonicalize_name(package)}/"
    request = urllib.request.Request(page, headers={"Accept": ACCEPT})
    if authorization:  # never sent on to where a redirect points
        request.add_unredirected_header("Authorization", authorization)
    try:
        # an opener per page: it reads the proxy settings (HTTPS_PROXY, NO_PROXY) now
        with urllib.request.build_opener().open(request, timeout=TIMEOUT) as answer:
            files = _parse(answer.read(), answer.headers.get("Content-Type", ""))
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return None
        reason = f"HTTP Error {exc.code}: {exc.reason}"
        raise CompatError(_unreachable(package, source, reason)) from None
    except (OSError, ValueError) as exc:
        said = str(getattr(exc, "reason", None) or exc)  # urllib's "[Errno 111] ..."
        raise CompatError(_unreachable(package, source, said)) from None
    found: Files = {}
    for entry in files:
        version = release_of(str(entry["filename"]), package)
        if version is not None:
            found.setdefault(version, []).append(entry)
    return found


def _unreachable(package: str, source: Source, reason: str) -> str:
    return (
        f"cannot list {package} releases from {source.shown} (from {source.where}): {reason}; "
        "check that URL, its credentials (netrc) and the proxy settings"
    )
