"""The cases as `--list` prints them, without importing onnx when nothing they are made
from changed (compat/state/listing.py)."""

from __future__ import annotations

from dataclasses import asdict

from compat.plan.config import Config
from compat.state.listing import Listed, listing_key, recall_listing, remember_listing
from compat.workflow.request import Request, default_corpus


def list_corpus(request: Request, config: Config) -> list[Listed]:
    """The cases as `--list` prints them: remembered while nothing they are made from
    changed (compat/state/listing.py), else loaded and remembered."""
    asked = request.corpus
    options = {"asked": asdict(asked), "corpus": config.corpus, "root": str(request.root)}
    sources = [
        asked.corpus or default_corpus(request.config),
        *config.cases_dirs,
        *asked.cases_dirs,
        request.config,
    ]
    key = listing_key(options, sources)
    listed = recall_listing(request.state_dir(), key)
    if listed is None:
        from compat.workflow.corpus import load_corpus  # the case modules: onnx

        listed = [Listed(c.id, c.checks) for c in load_corpus(request, config).cases]
        remember_listing(request.state_dir(), key, listed)
    return listed
