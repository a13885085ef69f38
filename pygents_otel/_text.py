"""Bounded user text.

Agent and tool names, descriptions, tags, item ids and exception messages are the
user's text: they go into span names, span and metric attributes and error messages,
and none of them may carry an unbounded string there. Cutting is cheap (a length
check, then a slice) so it can run on every span.

The rule and the function are the core's (``pygents._errors.cut``): one ``…`` marks a
cut, and the cut text, ellipsis included, fits the limit. Imported, not copied, so
the core, this layer and the dashboard cannot drift apart.
"""

from __future__ import annotations

from typing import Final

from pygents._errors import ELLIPSIS, cut

__all__ = ["ELLIPSIS", "NAME_LIMIT", "STACK_LIMIT", "TEXT_LIMIT", "bounded", "bounded_tail", "cut"]

NAME_LIMIT: Final = 256
"""Characters kept of a name, tag or id (and of a value quoted in an error message)."""

TEXT_LIMIT: Final = 1024
"""Characters kept of a description or an exception message."""

STACK_LIMIT: Final = 8192
"""Characters kept of a stack trace (its end: the innermost frames and the error)."""


def bounded(text: str, limit: int = NAME_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (its head kept)."""
    return text if len(text) <= limit else cut(text, limit)


def bounded_tail(text: str, limit: int = STACK_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, its end kept: a stack trace's innermost
    frames and the error."""
    return text if len(text) <= limit else cut(text, limit, "tail")
