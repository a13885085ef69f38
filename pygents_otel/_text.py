"""Bounded user text.

Agent and tool names, descriptions, tags, item ids and exception messages are the
user's text: they go into span names, span and metric attributes and error messages,
and none of them may carry an unbounded string there. Cutting is cheap (a length
check, then a slice) so it can run on every span.
"""

from __future__ import annotations

from typing import Final

NAME_LIMIT: Final = 256
"""Characters kept of a name, tag or id (and of a value quoted in an error message)."""

TEXT_LIMIT: Final = 1024
"""Characters kept of a description or an exception message."""

STACK_LIMIT: Final = 8192
"""Characters kept of a stack trace (its end: the innermost frames and the error)."""

ELLIPSIS: Final = "…"


def bounded(text: str, limit: int = NAME_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with ``…`` when something was cut."""
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def bounded_tail(text: str, limit: int = STACK_LIMIT) -> str:
    """The last ``limit`` characters of ``text``, after ``…`` when something was cut."""
    return text if len(text) <= limit else ELLIPSIS + text[-limit:]
