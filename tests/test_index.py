"""What the package index offers (compat/plan/index.py): an axis with its own `index-url`
lists its releases from that index (PEP 691's JSON simple API), never from PyPI."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from compat.core.errors import CompatError
from compat.plan.index import releases
from compat.plan.index_config import AxisIndex


@pytest.fixture
def index(tmp_path: Path) -> Iterator[str]:
    """A local index holding onnxruntime 7.1.0 and 7.2.1 (wheels for any Python), 7.3.0
    as an sdist only and 7.4.0 yanked."""
    files = [
        {"filename": "onnxruntime-7.1.0-py3-none-any.whl"},
        {"filename": "onnxruntime-7.2.1-py3-none-any.whl"},
        {"filename": "onnxruntime-7.3.0.tar.gz"},
        {"filename": "onnxruntime-7.4.0-py3-none-any.whl", "yanked": "broken"},
    ]
    page = tmp_path / "simple" / "onnxruntime"
    page.mkdir(parents=True)
    (page / "index.html").write_text(json.dumps({"meta": {"api-version": "1.0"}, "files": files}))
    handler = partial(SimpleHTTPRequestHandler, directory=str(tmp_path / "simple"))
    handler.log_message = lambda *args: None  # type: ignore[assignment,method-assign]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_an_axis_index_is_asked_for_its_own_releases(index: str) -> None:
    assert releases("onnxruntime", own=AxisIndex(index)) == ["7.1.0", "7.2.1"]
    assert releases("onnxruntime", yanked=True, own=AxisIndex(index)) == ["7.1.0", "7.2.1", "7.4.0"]


def test_an_unreachable_axis_index_is_named(index: str) -> None:
    with pytest.raises(CompatError, match=r"cannot list onnx releases from http://127\.0\.0\.1"):
        releases("onnx", own=AxisIndex(index))  # no such page there
