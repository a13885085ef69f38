"""Cutting text to a limit, for everything the dashboard shows or keeps.

The rule is the core's (``pygents._errors.cut``): one ``…`` marks a cut, and the cut
text, ellipsis included, fits the limit. This is a copy, not an import: the only
private core module pygents_tui relies on is ``pygents._extras``, and the rule does
not belong there. ``tests/tui/test_tui_text_cutting.py`` holds the copy to the core's results.

The dashboard's default keeps both ends: what it cuts is mostly names, ids and
attribute values, told apart by their end as often as by their start.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["ELLIPSIS", "cut"]

ELLIPSIS: Final = "…"


def cut(text: str, limit: int, keep: Literal["head", "tail", "middle"] = "middle") -> str:
    """``text`` if it fits in ``limit`` characters, else ``limit`` characters of it
    with ``…`` where text was left out: both ends kept, or its head, or its tail."""
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
