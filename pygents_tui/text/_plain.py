"""Plain text for widgets: a Rich ``Text`` that parses no markup and shows every
control character visibly (`pygents_tui.text._visible.visible`).

Apart from `pygents_tui.text._visible` because it needs Rich, which the dashboard's model
(importable without the 'tui' extra) must not.
"""

from __future__ import annotations

from rich.style import StyleType
from rich.text import Text

from pygents_tui.text._visible import visible

__all__ = ["plain"]


def plain(text: str, style: StyleType = "", *, lines: bool = False) -> Text:
    """A Rich ``Text`` of ``text`` as it is to be read: no markup is parsed, and every
    control character is made visible (`visible`)."""
    return Text(visible(text, lines=lines), style=style)
