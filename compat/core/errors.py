"""One error type per exit-code category; `cli.main` is the only handler."""

from __future__ import annotations


class CompatError(Exception):
    """A fatal, user-facing error: one line saying what, why and what to do."""

    return_code = 2


class UsageError(CompatError):
    """Bad command line or configuration (exit 2)."""

    return_code = 2


class ConfigError(UsageError):
    """`[tool.compat]` or a case module is malformed (exit 2)."""
