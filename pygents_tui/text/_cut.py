"""Cutting text to a limit, for everything the dashboard shows or keeps.

The rule is the core's, and so is the function: `cut` is ``pygents._errors.cut``
(one ``…`` marks a cut, and the cut text, ellipsis included, fits the limit), so the
dashboard, the OTel layer and the core cut the same way by construction.

Most of what the dashboard cuts is names, ids and attribute values, told apart by
their end as often as by their start, so its usual cut keeps both ends: `cut_middle`
says so at every call. A cut that keeps the head or the tail names it with ``cut``.
"""

from __future__ import annotations

from pygents._errors import ELLIPSIS, cut

__all__ = ["ELLIPSIS", "cut", "cut_middle"]


def cut_middle(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else ``limit`` characters of it
    with both ends kept and ``…`` in the middle (an id stays told apart by either)."""
    return text if len(text) <= limit else cut(text, limit, "middle")
