"""Bounded user text.

Agent and tool names, descriptions, tags, item ids and exception messages are the
user's text: they go into span names, span and metric attributes and error messages,
and none of them may carry an unbounded string there. Cutting is cheap (a length
check, then a slice) so it can run on every span.

The rule is the core's (``pygents._errors.cut``): one ``…`` marks a cut, and the cut
text, ellipsis included, fits the limit. This is a copy, not an import: the only
private core modules pygents_otel relies on are ``pygents._extras`` and
``pygents._public``, and the rule belongs in neither. ``tests/otel/test_otel_text_cutting.py``
holds the copy to the core's results.
"""

from __future__ import annotations

from typing import Final, Literal

NAME_LIMIT: Final = 256
"""Characters kept of a name, tag or id (and of a value quoted in an error message)."""

TEXT_LIMIT: Final = 1024
"""Characters kept of a description or an exception message."""

STACK_LIMIT: Final = 8192
"""Characters kept of a stack trace (its end: the innermost frames and the error)."""

ELLIPSIS: Final = "…"


def cut(text: str, limit: int, keep: Literal["head", "tail", "middle"] = "head") -> str:
    """``text`` if it fits in ``limit`` characters, else ``limit`` characters of it
    with ``…`` where text was left out: its head kept, its tail, or both ends."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS[: max(limit, 0)]
    room = limit - 1
    if keep == "head":
        return text[:room] + ELLIPSIS
    if keep == "tail":
        return ELLIPSIS + text[len(text) - room :]
    head = room // 2
    return text[:head] + ELLIPSIS + text[len(text) - (room - head) :]


def bounded(text: str, limit: int = NAME_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (its head kept)."""
    return text if len(text) <= limit else cut(text, limit)


def bounded_tail(text: str, limit: int = STACK_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, its end kept: a stack trace's innermost
    frames and the error."""
    return text if len(text) <= limit else cut(text, limit, "tail")
