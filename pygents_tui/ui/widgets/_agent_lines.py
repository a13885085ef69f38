"""The agents table's lines, drawn by the table itself and kept per row.

Textual's ``DataTable`` renders every visible cell again after any cell changes (its
caches are keyed by one counter of updates for the whole table): with a screenful of
agents whose Rate and counts move every tick, that is hundreds of cells rendered
through Rich ten times a second. `RowLines` renders each cell the way ``DataTable``
does (the same Rich renderables and styles, so the screen is the same to the byte),
but keeps each rendered cell by what it depends on: its text, its row's styles and
its width. A repaint then renders only the cells that changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import __version__ as textual_version
from textual.cache import LRUCache
from textual.color import Color
from textual.renderables.styled import Styled
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import Column

__all__ = ["Paint", "RowLines"]

_EMPTY = Text(no_wrap=True, end="")  # what DataTable draws for an empty cell
_COMPONENTS = (
    "header",
    "even-row",
    "odd-row",
    "hover",
    "header-hover",
    "cursor",
    "header-cursor",
)
CellKey = tuple[Any, ...]
# Textual 7.5 draws a row's style (its cursor's too) across the table's spare width on
# the right, with mouse metadata; before, that width had the row's background faded
# towards the table's, and no metadata. The lines must be those of the Textual
# installed (`pygents[tui]` allows 6.0 on).
_FULL_WIDTH_ROWS = tuple(map(int, re.findall(r"\d+", textual_version)[:2])) >= (7, 5)


@dataclass(frozen=True, slots=True)
class Paint:
    """See `RowLines.paint`. ``cursor`` and ``hover``: the rows they light, if any."""

    width: int
    scroll_x: int
    base: Style
    columns: list[tuple[Column, int]]  # each with its width, padding included
    cursor: int | None
    hover: int | None
    styles: dict[str, Style]
    zebra: bool
    fade: Color  # what the spare width's background fades towards (before Textual 7.5)
    foreground: bool  # the cursor's colours override the cells' own (Textual's "css")
    background: bool


class RowLines:
    """The lines of ``table`` (a row-cursor table without row labels nor fixed rows
    or columns): the header, then row ``index`` from the ``texts`` of its cells,
    which ``make`` turns into the cells' `Text`."""

    def __init__(self, table: DataTable[Any], make: Callable[[str, str, bool], Text]) -> None:
        self.table = table
        self.make = make  # (column key, text, finished) → the cell
        # Rendered cells by (column, text, finished, width, styles): a few screenfuls.
        self._cells: LRUCache[CellKey, list[Segment]] = LRUCache(4096)

    def paint(self) -> Paint:
        """What every line of one repaint shares: sizes, the cursor and the styles of
        the table's components (reading them costs more than drawing a cached line)."""
        table = self.table
        component = table.get_component_rich_style
        return Paint(
            width=table.size.width,
            scroll_x=table.scroll_offset.x,
            base=table.rich_style,
            columns=[(column, column.get_render_width(table)) for column in table.ordered_columns],
            cursor=table.cursor_coordinate.row if table.show_cursor else None,
            hover=(
                table.hover_coordinate.row
                if table._show_hover_cursor and table.show_cursor
                else None
            ),
            styles={name: component(f"datatable--{name}") for name in _COMPONENTS},
            zebra=table.zebra_stripes,
            fade=table.background_colors[1],
            foreground=table.cursor_foreground_priority == "css",
            background=table.cursor_background_priority == "css",
        )

    def line(self, index: int, texts: Sequence[str] | None, paint: Paint) -> Strip:
        """Row ``index`` (-1: the header), cropped to the table's scroll and width."""
        styles = paint.styles
        if index == -1:
            row_style = styles["header"]
        elif paint.zebra:
            row_style = styles["odd-row" if index % 2 else "even-row"]
        else:
            row_style = paint.base
        style = Style()
        if index == paint.hover:
            style += styles["hover"]
            if index == -1:
                style += styles["header-hover"]
        if index == paint.cursor:
            style += styles["cursor"]
            if index == -1:
                style += styles["header-cursor"]
        post = Style.null()
        if paint.foreground:
            post += Style.from_color(color=style.color)
        if paint.background:
            post += Style.from_color(bgcolor=style.bgcolor)

        segments: list[Segment] = []
        finished = bool(texts and texts[-1])
        used = 0
        for at, (column, column_width) in enumerate(paint.columns):
            used += column_width
            pre = row_style + Style.from_meta({"row": index, "column": at}) + style
            text = "" if texts is None else texts[at] if at < len(texts) - 1 else ""
            key: CellKey = (column.key, index == -1, text, finished, column_width, pre, post)
            cell = self._cells.get(key)
            if cell is None:
                content = column.label
                if index != -1:
                    content = self.make(column.key.value or "", text, finished)
                cell = self._render(content, column_width, pre, post)
                self._cells.set(key, cell)
            segments.extend(cell)
        width = paint.width
        segments.append(Segment(" " * max(0, width - used), _spare(row_style, style, index, paint)))
        x = paint.scroll_x
        return Strip(segments).crop(x, x + width).adjust_cell_length(width, paint.base).simplify()

    def _render(self, cell: Text, width: int, pre: Style, post: Style) -> list[Segment]:
        """One cell's line, as ``DataTable._render_cell`` renders it."""
        table = self.table
        options = table.app.console_options.update_dimensions(width, 1).update(no_wrap=True)
        renderable = Padding(cell or _EMPTY, (0, table.cell_padding))
        lines = table.app.console.render_lines(
            Styled(renderable, pre_style=pre, post_style=post), options
        )
        return lines[0]


def _spare(row_style: Style, style: Style, index: int, paint: Paint) -> Style:
    """The style of a line's spare width, right of the last column (`_FULL_WIDTH_ROWS`)."""
    if _FULL_WIDTH_ROWS:
        return (
            row_style + style + Style.from_meta({"row": index, "column": 0, "out_of_bounds": True})
        )
    if row_style.bgcolor is None:
        return Style.from_color(row_style.color, row_style.bgcolor)
    faded = Color.from_rich_color(row_style.bgcolor).blend(paint.fade, factor=0.25)
    return Style.from_color(color=row_style.color, bgcolor=faded.rich_color)
