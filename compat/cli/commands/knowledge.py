"""`onnx-compat knowledge`: every known upstream bug the corpus can detect in a model
(compat/corpus/knowledge.py), as a list or as JSON for tools in other languages."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class KnowledgeRequest:
    """Which corpus (None: the built-in one), and whether to print JSON."""

    corpus: Path | None = None
    json: bool = False


PARSER: dict[str, Any] = {
    "description": "Lists the detectors of the corpus: each known upstream bug `onnx-compat "
    "scan` finds in a model, with its construct, package, release range, failing checks, "
    "upstream link and the rewrite that spells it the portable way.",
    "epilog": "example: onnx-compat knowledge --json",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print them as JSON")
    parser.add_argument(
        "--corpus", type=Path, help="directory of case modules (default: the built-in corpus)"
    )


def request(args: argparse.Namespace) -> KnowledgeRequest:
    return KnowledgeRequest(args.corpus, args.json)


def run(request: KnowledgeRequest) -> int:
    from compat.corpus.knowledge import knowledge_json

    document = knowledge_json(request.corpus)
    if request.json:
        print(json.dumps(document, indent=1))
        return 0
    for entry in document["detectors"]:
        every = f"every {entry['package']} release"
        versions = f"{entry['package']} {entry['versions']}" if entry["versions"] else every
        print(f"{entry['id']}: {entry['construct']}")
        print(f"    {versions}: {', '.join(entry['checks'])} fail — {entry['reason']}")
        print(f"    {entry['link'] or 'no public report'}")
        if entry["rewrite"]:
            print(f"    portable: {entry['portable']} (rewrite {entry['rewrite']})")
    print(f"{len(document['detectors'])} detectors")
    return 0
