"""Verdicts: how a check ends with an outcome other than pass, and where it happened."""

from __future__ import annotations

import traceback


class Verdict(Exception):
    """Ends a check early with an outcome other than pass."""

    def __init__(self, outcome, phase, detail, trace=""):
        Exception.__init__(self, detail)
        self.outcome = outcome
        self.phase = phase
        self.detail = detail
        self.trace = trace  # the full traceback of the exception behind it, if any


def fail(phase, detail):
    return Verdict("fail", phase, detail)


def skip(detail):
    return Verdict("skip", "", detail)


def one_line(exc):
    text = "%s: %s" % (type(exc).__name__, str(exc).strip())
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " ".join(lines)[:2000]


class Phase:
    """Labels the phase of a check, so an exception is reported where it happened."""

    def __init__(self, name, as_fail=()):
        self.name = name
        self.as_fail = as_fail  # exception types that are the check's verdict, not an error

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or isinstance(exc, Verdict):
            return False
        trace = "".join(traceback.format_exception(exc_type, exc, tb))
        outcome = "fail" if self.as_fail and isinstance(exc, self.as_fail) else "error"
        raise Verdict(outcome, self.name, one_line(exc), trace)
