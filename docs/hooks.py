"""The site's mkdocs hook: the reference pages, generated from the code at every build
(compat/cli/reference.py) and added to the site without being written into docs/.

Generated at build time rather than committed: they cost a second to make, so they can
never drift from the parsers and tables they document, and there is nothing to
regenerate and commit when an option is added. The compatibility pages beside them are
committed instead, because they render from stored results of long runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from compat.cli.reference import pages


def on_files(files: Files, config: Any) -> Files:
    docs = Path(config["docs_dir"])
    for uri, text in pages(docs, docs.parent / "cases").items():
        files.append(File.generated(config, uri, content=text))
    return files
