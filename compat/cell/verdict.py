"""Verdicts: how a check ends with an outcome other than pass, and where it happened."""

from __future__ import annotations

import traceback

from compat.cell.protocol import LIMIT


class Verdict(Exception):
    """Ends a check early with an outcome other than pass."""

    def __init__(self, outcome: str, phase: str, detail: str, trace: str = "") -> None:
        Exception.__init__(self, detail)
        self.outcome = outcome
        self.phase = phase
        self.detail = detail
        self.trace = trace  # the full traceback of the exception behind it, if any


def fail(phase: str, detail: str) -> Verdict:
    return Verdict("fail", phase, detail)


def skip(detail: str) -> Verdict:
    return Verdict("skip", "", detail)


def beyond(detail: str) -> Verdict:
    """A skip because this release cannot read the model at all (protocol.LIMIT)."""
    return Verdict("skip", LIMIT, detail)


#: Longest detail a result keeps: an exception's text may embed a whole model.
DETAIL_LIMIT = 2000
#: Longest traceback a result keeps (the full one: `nox -s repro`).
TRACE_LIMIT = 20000


def bounded(text: str, limit: int = DETAIL_LIMIT) -> str:
    """`text` if it fits, else its head and tail with the cut said and measured."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 4) :]
    return "%s [... %d characters cut ...] %s" % (head, len(text) - len(head) - len(tail), tail)


def one_line(exc: BaseException) -> str:
    text = "%s: %s" % (type(exc).__name__, str(exc).strip())
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return bounded(" ".join(lines))


class Phase:
    """Labels the phase of a check, so an exception is reported where it happened."""

    def __init__(self, name, as_fail=(), as_skip=(), why_skip=None, skip_when=None):
        self.name = name
        self.as_fail = as_fail  # exception types that are the check's verdict, not an error
        self.as_skip = as_skip  # exception types that say the runtime lacks a capability
        self.skip_when = skip_when  # or a test of the exception that says so
        self.why_skip = why_skip or one_line  # the skip's reason, from the exception

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or isinstance(exc, Verdict):
            return False
        trace = bounded("".join(traceback.format_exception(exc_type, exc, tb)), TRACE_LIMIT)
        if (self.as_skip and isinstance(exc, self.as_skip)) or (
            self.skip_when is not None and self.skip_when(exc)
        ):
            raise Verdict("skip", "", self.why_skip(exc), trace)
        outcome = "fail" if self.as_fail and isinstance(exc, self.as_fail) else "error"
        raise Verdict(outcome, self.name, one_line(exc), trace)
