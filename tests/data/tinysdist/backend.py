"""A PEP 517 backend of one hook: the wheel of tinysdist 1.0, written with the standard
library alone, so uv builds it with no build dependency to download."""

from __future__ import annotations

import base64
import hashlib
import zipfile

NAME = "tinysdist-1.0-py3-none-any.whl"
FILES = {
    "tinysdist.py": "ANSWER = 42\n",
    "tinysdist-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinysdist\nVersion: 1.0\n",
    "tinysdist-1.0.dist-info/WHEEL": (
        "Wheel-Version: 1.0\nGenerator: backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ),
}


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, object] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Writes the wheel into `wheel_directory`, with its RECORD, and returns its name."""
    files = dict(FILES)
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append("tinysdist-1.0.dist-info/RECORD,,")
    files["tinysdist-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(f"{wheel_directory}/{NAME}", "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
    return NAME
