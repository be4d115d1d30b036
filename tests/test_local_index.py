"""The plan asks the index the user's installs use (issue 36 item 5): a folder of files
served by `http.server` on 127.0.0.1 (a PEP 503 index: directory listings are its
pages), named by UV_INDEX_URL, answers `plan`, the no-wheel decision and bisect's
range, while every request to the public index goes to a recording proxy that answers
none. A release with sdists alone is built by uv, not called no-wheel."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import tarfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from compat.cli.commands.bisect import BisectRequest, bisected
from compat.core.errors import CompatError, UsageError
from compat.core.install import InstallRequest
from compat.execute.envs import env_python
from compat.execute.installer import find_uv, install_commands, run_command
from compat.plan import index
from compat.plan.index import built_from_source, indexes, missing_wheel, releases
from compat.workflow.request import Request
from tests.conftest import ROOT

LINUX = "manylinux_2_17_x86_64.manylinux2014_x86_64"
#: what the local index holds: names only (a listing needs no contents), but tinysdist's
#: sdist is real, and built by uv
FILES = {
    "onnx": [
        "onnx-1.18.0-py3-none-any.whl",
        "onnx-1.18.7-py3-none-any.whl",  # no such release on PyPI: the local index's own
        "onnx-1.19.5-py3-none-any.whl",
        "onnx-7.2.0.tar.gz",  # a wheel for CPython 3.8 alone (and an sdist, as onnx has)
        f"onnx-7.2.0-cp38-cp38-{LINUX}.whl",
    ],
    "onnxruntime": [
        "onnxruntime-1.22.9-py3-none-any.whl",
        "onnxruntime-1.24.4-py3-none-any.whl",
        f"onnxruntime-7.1.0-cp38-cp38-{LINUX}.whl",
    ],
}

CONFIG = """
[tool.compat.onnx]
versions = ">=1.18"
pair = "1.24.4"

[tool.compat.onnxruntime]
versions = ["1.24.4"]
pair = "1.18.0"
"""

SDIST = ROOT / "tests" / "data" / "tinysdist"


def _sdist(folder: Path) -> None:
    """tinysdist 1.0 (tests/data/tinysdist), a real sdist whose in-tree backend needs
    nothing from any index."""
    with tarfile.open(folder / "tinysdist-1.0.tar.gz", "w:gz") as tar:
        for name in ("pyproject.toml", "PKG-INFO", "backend.py"):
            tar.add(SDIST / name, f"tinysdist-1.0/{name}")


@dataclass
class Served:
    url: str
    paths: list[str] = field(default_factory=list)  # every page asked, in order
    auth: list[str] = field(default_factory=list)  # every Authorization header sent


def _serve(handler: Callable[..., BaseHTTPRequestHandler]) -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def local_index(tmp_path: Path) -> Iterator[Served]:
    """The folder served as the index; every page it is asked for is recorded."""
    root = tmp_path / "simple"
    for project, names in FILES.items():
        (root / project).mkdir(parents=True)
        for name in names:
            (root / project / name).write_bytes(b"")
    (root / "onnx-weekly").mkdir()  # a PEP 503 page as an index writes it, one file yanked
    (root / "onnx-weekly" / "index.html").write_text(
        '<html><body><a href="../../f/onnx_weekly-1.20.0.dev20250101-py3-none-any.whl#sha256=0">'
        "onnx_weekly-1.20.0.dev20250101-py3-none-any.whl</a>\n"
        '<a href="/f/onnx_weekly-1.20.0.dev20250108-py3-none-any.whl" data-yanked="broken">'
        "onnx_weekly-1.20.0.dev20250108-py3-none-any.whl</a></body></html>"
    )
    (root / "tinysdist").mkdir()
    _sdist(root / "tinysdist")
    served = Served("")

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            served.paths.append(self.path)
            served.auth.append(self.headers.get("Authorization", ""))

    served.url = _serve(partial(Handler, directory=str(root)))
    yield served


@pytest.fixture
def public(monkeypatch: pytest.MonkeyPatch, local_index: Served) -> list[str]:
    """UV_INDEX_URL names the local index, and a request to any other host goes to a
    proxy that records it and answers 502: what the public index was asked."""
    asked: list[str] = []

    class Proxy(BaseHTTPRequestHandler):
        def _refuse(self) -> None:
            asked.append(f"{self.command} {self.path}")
            self.send_error(502)

        do_CONNECT = do_GET = _refuse

        def log_message(self, *args: object) -> None:
            pass

    proxy = _serve(Proxy)
    # the index is asked once per process: an answer another test in this worker had
    # from the public index would hide a request
    index._listing.cache_clear()
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("UV_INDEX_URL", local_index.url)
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, proxy)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1")
    return asked


@pytest.mark.subprocess  # `plan` runs as the user runs it
def test_plan_lists_the_local_index_releases_and_asks_the_public_index_nothing(
    tmp_path: Path, local_index: Served, public: list[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    command = [sys.executable, "-m", "compat", "plan", "--ort", "1.22"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    cells = [line.split()[0] for line in done.stdout.splitlines()]
    # one per minor, its newest patch with a wheel for this Python (7.2.0: CPython 3.8's)
    assert cells == ["onnx1.18.7-ort1.24.4", "onnx1.19.5-ort1.24.4", "onnx1.18.0-ort1.22.9"]
    assert "--ort 1.22: 1.22.9, the newest 1.22.x" in done.stderr
    assert {"/onnx/", "/onnxruntime/"} <= set(local_index.paths)
    assert public == []


def test_a_no_wheel_decision_follows_the_local_index_files(
    local_index: Served, public: list[str]
) -> None:
    assert indexes("onnx").sources[-1].where == "UV_INDEX_URL"
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    reason = missing_wheel(InstallRequest(("onnx==7.2.0", "onnxruntime==1.24.4")), python)
    assert reason == (
        f"onnx 7.2.0 has no wheel for CPython {python} on this platform (wheels for 3.8): "
        "not installable there, by the package index"
    )
    # PyPI has onnxruntime 1.24.4 without a wheel for 3.10; the local index has one
    assert missing_wheel(InstallRequest(("onnx==1.18.0", "onnxruntime==1.24.4")), "3.10") == ""
    # a release of sdists alone is installable: uv builds it
    assert missing_wheel(InstallRequest(("tinysdist==1.0", "onnx==1.18.0")), python) == ""
    assert built_from_source(InstallRequest(("tinysdist==1.0", "onnx==1.18.0", "numpy"))) == (
        "tinysdist",
    )
    assert public == []


def test_bisect_range_and_previews_come_from_the_local_index(
    local_index: Served, public: list[str]
) -> None:
    asked = BisectRequest(Request(), "onnx", good="1.18.0", bad="1.19.5")
    assert bisected(asked, "1.18.0", "") == ["1.18.0", "1.18.7", "1.19.5"]
    assert releases("onnx-weekly", pre=True) == ["1.20.0.dev20250101"]  # the yanked one left out
    assert releases("onnx-weekly", pre=True, yanked=True)[-1] == "1.20.0.dev20250108"
    assert bisected(asked, "1.18.0", "3.12") == ["1.18.0", "1.18.7", "1.19.5"]
    short = BisectRequest(Request(), "onnx", good="1.18", bad="1.19.5")
    with pytest.raises(UsageError, match=r"--good 1\.18: .*like 1\.18\.0, 1\.18\.7$"):
        bisected(short, "1.18.0", "")
    beyond = BisectRequest(Request(), "onnx", good="1.18.0", bad="7.2.0")
    with pytest.raises(UsageError, match=r"--bad 7\.2\.0: onnx 7\.2\.0 has no wheel for CPython"):
        bisected(beyond, "1.18.0", "3.12")
    assert public == []


@pytest.mark.subprocess  # uv builds the sdist
def test_a_release_of_sdists_alone_is_built_by_uv_from_the_local_index(
    tmp_path: Path, local_index: Served, public: list[str]
) -> None:
    requirements = InstallRequest(("tinysdist==1.0",))
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}  # built here, not reused
    for from_source, expected in (((), 1), (built_from_source(requirements), 0)):
        directory = tmp_path / f"env{len(from_source)}"
        steps = install_commands(
            find_uv(),
            sys.executable,
            directory,
            env_python(directory),
            requirements,
            None,
            from_source,
        )
        done = [run_command(step, timeout=300, env=env) for step in steps]
        assert done[-1].returncode == expected, done[-1].stderr
    check = [str(env_python(tmp_path / "env1")), "-c", "import tinysdist; print(tinysdist.ANSWER)"]
    assert subprocess.run(check, capture_output=True, text=True, timeout=60).stdout == "42\n"
    assert public == []


def test_netrc_credentials_are_sent_and_never_printed(
    tmp_path: Path, local_index: Served, public: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login alice password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert releases("onnxruntime") == ["1.22.9", "1.24.4"]
    assert local_index.auth[-1] == "Basic " + base64.b64encode(b"alice:s3cret").decode()
    dead = local_index.url.replace("http://", "http://bob:hunter2@") + "/no-such-root"
    monkeypatch.setenv("UV_INDEX_URL", dead)
    with pytest.raises(CompatError) as info:
        releases("onnxruntime")
    said = str(info.value)
    assert "hunter2" not in said and "bob" not in said and "\n" not in said
    assert f"from {local_index.url}/no-such-root (from UV_INDEX_URL)" in said
    assert local_index.auth[-1] == "Basic " + base64.b64encode(b"bob:hunter2").decode()


@pytest.mark.subprocess
def test_an_unreachable_index_is_one_line_naming_it_and_its_variable(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    env = {**os.environ, "UV_INDEX_URL": "http://carol:pw123@127.0.0.1:9/simple"}
    env.pop("UV_DEFAULT_INDEX", None)
    done = subprocess.run(
        [sys.executable, "-m", "compat", "plan"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(
        "onnx-compat: error: cannot list onnx releases from http://127.0.0.1:9/simple "
        "(from UV_INDEX_URL): "
    )
    assert (
        done.stderr.count("\n") == 1 and "pw123" not in done.stderr and "carol" not in done.stderr
    )


def test_the_recording_proxy_sees_a_request_for_the_public_index(
    local_index: Served, public: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without UV_INDEX_URL the public index is asked, and the proxy says so: the tests
    above would see any such request."""
    monkeypatch.delenv("UV_INDEX_URL")
    with pytest.raises(CompatError, match=r"from https://pypi\.org/simple \(from PyPI"):
        releases("onnx")
    assert public == ["CONNECT pypi.org:443"]


@pytest.mark.subprocess  # `plan` runs as the user runs it
def test_an_axis_extra_index_is_asked_for_its_releases_before_the_users(
    tmp_path: Path, local_index: Served, public: list[str]
) -> None:
    """onnxruntime's nightlies live on an index of their own: an axis's `extra-index-url`
    is asked first, as uv asks it when the cells install (first index with the project
    wins), so the plan holds the releases the cells can install."""
    nightly = tmp_path / "nightly" / "onnxruntime"
    nightly.mkdir(parents=True)
    (nightly / "onnxruntime-1.25.0-py3-none-any.whl").write_bytes(b"")
    asked: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            asked.append(self.path)

    url = _serve(partial(Handler, directory=str(tmp_path / "nightly")))
    config = CONFIG.replace(
        'versions = ["1.24.4"]', f'versions = ">=1.24"\nextra-index-url = "{url}"'
    )
    (tmp_path / "pyproject.toml").write_text(config)
    command = [sys.executable, "-m", "compat", "plan", "--onnx", "1.18.0"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    cells = [line.split()[0] for line in done.stdout.splitlines()]
    # the onnx axis's cell holds onnxruntime at its pair; the onnxruntime axis lists the
    # nightly index's release alone (the user's index has 1.24.4 and 1.22.9 too)
    assert cells == ["onnx1.18.0-ort1.24.4", "onnx1.18.0-ort1.25.0"], done.stdout
    assert "/onnxruntime/" in asked
    assert public == []
