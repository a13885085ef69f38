"""What a running Textual app shows, read through Textual's public API (tests/tui only).

Every dashboard test that checks the screen reads it here, so that they all see the
same thing a terminal would: in each cell, the top-most widget there. The active
``Screen.get_widget_at`` names that widget and its region, and ``Widget.render_lines``
draws one line of it (the call Textual itself makes to paint it); each row is the join
of the pieces of those lines, left to right. The rows are ``Strip``s that keep their
styles (colours, links), so a test can check how text is drawn, not only what it says.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from textual.app import App
from textual.errors import NoWidget
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget


def screen_strips(app: App[Any]) -> list[Strip]:
    """The active screen, one styled strip a row, each as wide as the screen."""
    screen = app.screen
    width, height = screen.size
    return [_row(screen, y, width) for y in range(height)]


def screen_lines(app: App[Any]) -> list[str]:
    """The active screen's rows as plain text."""
    return [strip.text for strip in screen_strips(app)]


def screen_text(app: App[Any]) -> str:
    """The active screen as plain text, a line a row."""
    return "\n".join(screen_lines(app))


def _row(screen: Screen[Any], y: int, width: int) -> Strip:
    """Row ``y``: each run of cells under one top-most widget, cut from its line there."""
    pieces: list[Strip] = []
    x = 0
    while x < width:
        top = _top(screen, x, y)
        end = x + 1
        while end < width and _top(screen, end, y) == top:
            end += 1
        if top is None:  # not laid out yet: a terminal shows blank cells
            pieces.append(Strip.blank(end - x))
        else:
            widget, region = top
            lines = widget.render_lines(Region(0, y - region.y, region.width, 1))
            line = lines[0] if lines else Strip([])
            # A widget mounted a moment ago may draw a short line: pad it, so that
            # every later piece of the row stays in its column.
            pieces.append(line.crop_extend(x - region.x, end - region.x, None))
        x = end
    return Strip.join(pieces)


def _top(screen: Screen[Any], x: int, y: int) -> tuple[Widget, Region] | None:
    """The widget a terminal shows at cell (x, y), with its region on the screen."""
    try:
        return screen.get_widget_at(x, y)
    except NoWidget:
        return None


def control_characters(lines: list[str]) -> list[tuple[int, str]]:
    """Every control character in ``lines`` (a screen read by `screen_lines`), with the
    row it is on: what a hostile name could make a terminal obey."""
    return [
        (row, repr(char))
        for row, line in enumerate(lines)
        for char in line
        if unicodedata.category(char) == "Cc"
    ]
