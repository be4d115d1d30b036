"""What every phase of `nox -s triage` shares: how it speaks, and the one-check case."""

from __future__ import annotations

from dataclasses import replace

from compat.core.case import Case

FAMILY = "triage"


def say(text: str) -> None:
    print(text, flush=True)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'es' if word.endswith('x') else 's'}" if count != 1 else f"1 {word}"


def only_check(case: Case, check: str, case_id: str | None = None) -> Case:
    return replace(case, id=case_id or case.id, builtin_checks=(check,), custom_checks=())


def clip(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and an ellipsis saying it goes on."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
