"""The agents overview: one row per agent the view knows, the finished ones dimmed.

With a fleet of thousands of agents, only the rows on screen are written on each
repaint: the table keeps every row (Textual's cursor, scrolling and selection work on
them as on any table), but a row's cells are computed and written when it is visible,
read, or scrolled into view, not for the thousands of rows no one sees. Its cost per
repaint follows the rows on screen; what stays per agent is cheap: the order chosen
(filter and sort) and the columns' widths."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Self

from rich.text import Text
from textual import events
from textual.coordinate import Coordinate
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widgets.data_table import ColumnKey, RowKey

from pygents_tui.state import AgentRow, DashboardView
from pygents_tui.text._cut import cut
from pygents_tui.text._visible import visible
from pygents_tui.ui.widgets._agent_cells import (
    TOKENS_COLUMN,
    agent_fields,
    agent_sort_key,
    cell,
    cells,
    sized,
)
from pygents_tui.ui.widgets._agent_lines import Paint, RowLines
from pygents_tui.ui.widgets._attention import tokens_cell
from pygents_tui.ui.widgets._bulk_rows import relayout
from pygents_tui.ui.widgets._fit import fit_widths
from pygents_tui.ui.widgets._mailbox_cell import MAILBOX_COLUMN, mailbox_cell
from pygents_tui.ui.widgets._panel import NavigableTable
from pygents_tui.ui.widgets._rows import RowChoice
from pygents_tui.ui.widgets._text import Legend, legend

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

__all__ = ["AgentsTable", "agent_fields", "agent_sort_key", "cells"]


class AgentsTable(NavigableTable[Text]):
    """Agents with state, queue, current turn, counts, context sizes and throughput.

    The list that chooses the selected agent: the main screen follows its cursor.
    Rows are keyed by the agent's ``key`` (its name in-process; service, instance
    and agent id in listen mode, where names repeat across processes). Agents that
    have left the registry stay listed, dimmed, until cleared."""

    # The narrowest each column starts at (the agent's: ``agent_width``); columns grow
    # with their content and give width back, in the order of `GIVE`, to fit the screen.
    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = (
        ("agent", "Agent", 10),
        ("state", "State", 7),
        ("queue", "Queue", 5),
        ("current", "Current", 9),
        ("counts", "✔/✖/◷", 9),
        ("values", "Values", 6),
        ("ctx", "Ctx q p", 9),
        ("rate", "Rate", 8),
    )
    LEGEND: ClassVar[Legend] = (
        ("✔/✖/◷", "turns completed / failed / timed out; ⊘n: n turns cancelled"),
        ("Values", "values streamed or returned"),
        ("Ctx q p", "context queue size/limit, context pool size/limit (∞: unbounded)"),
        ("Tokens", "model tokens of the agent's turns (and their cost, when priced)"),
        ("Rate", "completed turns per second, last 8 s"),
        ("dimmed", "finished: the agent left the registry (c clears)"),
    )
    """What the headers that are symbols (and the dimmed rows) mean: shown in the
    help screen and as the table's tooltip."""

    GIVE: ClassVar[tuple[tuple[str, int], ...]] = (
        ("current", 7),
        ("rate", 4),
        ("ctx", 5),
        ("counts", 5),
        ("queue", 3),
        ("values", 3),
        ("agent", -1),  # -1: down to the longest agent name, whatever its prefix
        ("current", 3),
        ("state", 4),
        ("ctx", 3),
        ("counts", 3),
        ("rate", 2),
        ("agent", 6),
    )
    """The order in which columns give width back when the screen is too narrow, and
    the width each may shrink to: the agent's own name goes last."""
    SORTS: ClassVar[tuple[str, ...]] = ("agent", "state", "queue", "current", "failed", "values")
    # Class defaults: DataTable's constructor already asks for repaints (`refresh`).
    _holding = False  # cells are being written: repaint requests are held
    _held = False  # and one came meanwhile
    _laying_out = False  # rows are being added, removed or sorted: none is written

    def __init__(
        self, view: DashboardView, *, id: str | None = None, agent_width: int = 10
    ) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.view = view
        self.agent_width = agent_width  # the narrowest the Agent column starts at
        self.choice = RowChoice(self.SORTS)
        self._columns: tuple[tuple[str, str, int], ...] = self.COLUMNS
        self._with_mailbox = self._with_tokens = False  # columns that appear when needed
        self._drawn: tuple[dict[str, int], list[str]] = ({}, [])  # widths, row order
        self._current = 9  # the Current column's width: grows, never shrinks back
        # What the rows' cells are made of, as of the last `show`: the rows chosen, by
        # key (the view's own, so a row written later shows it as it is then), their
        # Tokens cells and the mailboxes' statistics.
        self._shown: dict[str, AgentRow] = {}
        self._tokens_of: Mapping[str, str] | None = None
        self._mailbox_of: Mapping[str, MailboxStats] | None = None
        self._cells: dict[str, tuple[str, ...]] = {}  # by key: the cells, then "gone"
        self._tick = 0  # `show`s so far: a row written in this one is up to date
        self._written: dict[str, int] = {}  # by key: the tick its cells were written in
        self._lines = RowLines(self, cell)
        self._paint: Paint | None = None  # while Textual paints: see `render_lines`
        self.tooltip = legend(self.LEGEND)

    def column_width(self, key: str, width: int) -> int:
        return self.agent_width if key == "agent" else width

    @property
    def selected(self) -> str | None:
        """The key of the agent under the cursor."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def refresh_from(self, agent: str | None = None) -> None:
        """Every agent's row; ``agent`` is unused (this table *makes* the choice)."""
        self.show(self.view.agent_rows())

    def choice_changed(self) -> None:
        self.refresh_from()

    def on_resize(self, event: events.Resize) -> None:
        """The rows a new size uncovers are written. Widths follow the screen at the
        next `show`, which fits them to it and refits the columns if they differ from
        those drawn (none while the view is frozen, which holds the screen as it was);
        until then rows are cut to the widths drawn."""
        self._write(self._on_screen())

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Rows scrolled into view are written before Textual paints them."""
        super().watch_scroll_y(old_value, new_value)
        self._write(self._on_screen())

    def _mailboxes(self) -> Mapping[str, MailboxStats] | None:
        """The statistics of the agents the source serves from ``pygents.redis``
        mailboxes (this process's; a listening dashboard serves none).

        Their Mailbox column appears with the first of them, so a program without
        mailboxes keeps a table that fits 80 columns."""
        stats = self.view.mailboxes()
        if stats and not self._with_mailbox:
            self._with_mailbox = True
            self._columns = (*self._columns, MAILBOX_COLUMN)
        return stats if self._with_mailbox else None

    def _tokens(self, rows: Sequence[AgentRow]) -> dict[str, str] | None:
        """Each agent's Tokens cell; the column appears with the first model call
        credited to an agent (a program that makes none keeps its table as it was)."""
        view = self.view
        if not self._with_tokens:
            fleet = view.usage(None)  # no agent has any before the fleet has some
            if fleet is None or not fleet.calls:
                return None
        priced = view.priced()
        texts = {row.key: tokens_cell(view.usage(row.key), priced) for row in rows}
        if not self._with_tokens and any(texts.values()):
            self._with_tokens = True
            at = next(i for i, (key, _, _) in enumerate(self._columns) if key == "rate")
            self._columns = (*self._columns[:at], TOKENS_COLUMN, *self._columns[at:])
        return texts if self._with_tokens else None

    def _widths(self, rows: Sequence[AgentRow], tokens: Mapping[str, str] | None) -> dict[str, int]:
        """Each column as wide as its content (its header at least), then narrowed to
        the table's width in the order of `GIVE` (Tokens first: the status line has
        the fleet's). Every row counts, shown or not."""
        natural = {key: max(len(label), 3) for key, label, _ in self._columns}
        # Names as they are drawn: a control or format character takes up to 10 cells.
        natural["agent"] = max([self.agent_width, *(len(visible(row.label)) for row in rows)])
        # Column by column over every row's sized cells: the one pass per agent a
        # tick still makes (a column must not change width as the table scrolls).
        if rows:
            columns = zip(*map(sized, rows), strict=True)
            for key, texts in zip(("queue", "counts", "values", "ctx"), columns, strict=True):
                natural[key] = max(natural[key], *map(len, texts))
        tools = (len(visible(r.current_tool or "")) for r in rows)
        self._current = min(max([self._current, *tools]), 24)
        natural.update(state=7, current=self._current, rate=8)
        if self._with_mailbox:
            natural["mailbox"] = MAILBOX_COLUMN[2]
        give = list(self.GIVE)
        if tokens is not None:
            natural["tokens"] = max([natural["tokens"], *map(len, tokens.values())])
            give.insert(0, ("tokens", 0))
        names = max((len(visible(row.name)) for row in rows), default=6)
        give = [(key, names if floor < 0 else floor) for key, floor in give]
        available = (self.size.width or self.app.size.width) - 2  # a vertical scrollbar
        return fit_widths(natural, give, available)

    def show(self, rows: Sequence[AgentRow]) -> None:
        """Lay out the rows that pass the filter, in the order chosen, and write the
        cells of those on screen (the others are written when they come into view or
        are read). The table is rebuilt when its columns change or many rows come or
        go, its columns refitted in place when their widths change, its rows moved when
        their order changes; otherwise only changed cells are written."""
        self._mailbox_of = self._mailboxes()
        self._tokens_of = self._tokens(rows)
        widths = self._widths(rows, self._tokens_of)
        chosen = self.choice.choose(rows, agent_fields, agent_sort_key)
        self._shown = {row.key: row for row in chosen}
        self._tick += 1
        drawn = self._drawn[1]
        self._laying_out = True
        try:
            same_columns = [column.key.value for column in self.ordered_columns] == [
                key for key, _, _ in self._columns
            ]
            if not same_columns:
                self._rebuild(widths)
            else:
                if widths != self._drawn[0]:
                    self._refit(widths)
                if list(self._shown) != drawn:
                    self._reorder()
        finally:
            self._laying_out = False
        self._write(self._on_screen())

    def _on_screen(self) -> list[str]:
        """The keys of the rows on screen, and one more each side (the window is
        reckoned before Textual clamps a scroll; a spare row costs little)."""
        order = self._drawn[1]
        top = int(self.scroll_y)
        height = self.size.height or self.app.size.height
        return order[max(top - 1, 0) : top + height + 1]

    def _texts(self, row: AgentRow) -> tuple[str, ...]:
        """A row's cells as text, in the order of the columns, then whether it is gone."""
        widths = self._drawn[0]
        texts = cells(row, widths)
        if self._tokens_of is not None:  # before the Rate column
            token_cell = cut(self._tokens_of.get(row.key, ""), widths["tokens"], "head")
            texts = (*texts[:-1], token_cell, texts[-1])
        if self._mailbox_of is not None:
            texts = (*texts, mailbox_cell(self._mailbox_of.get(row.key)))
        return (*texts, "gone" if row.gone else "")

    def _write(self, keys: Iterable[str]) -> None:
        """Write the cells of the rows ``keys`` that this `show` has not written yet
        (only those that changed), and ask for one repaint for them all. None while
        the rows are laid out: Textual scrolls as it clears or sorts them, and the
        order on screen is not yet the one `show` chose."""
        if self._laying_out:
            return
        self._holding = True  # the cells' updates repaint the table once, at the end
        try:
            for key in keys:
                row = self._shown.get(key)
                if row is None or self._written.get(key) == self._tick:
                    continue
                self._written[key] = self._tick
                texts = self._texts(row)
                previous = self._cells.get(key)
                if previous == texts:
                    continue
                restyled = previous is None or previous[-1] != texts[-1]
                finished = bool(texts[-1])
                for (column, _label, _width), old, new in zip(
                    self._columns, previous or texts, texts, strict=False
                ):
                    if old != new or restyled:
                        self.update_cell(key, column, cell(column, new, finished))
                self._cells[key] = texts
        finally:
            self._holding = False
        if self._held:
            self._held = False
            super().refresh()

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        """Textual's, except while `_write` updates cells: ``update_cell`` asks for a
        repaint of the whole table each time, and marking a widget dirty costs tens of
        microseconds; a screenful of rows changes hundreds of cells a tick, so the
        repaints are held and asked for once."""
        if self._holding and not (regions or layout or recompose):
            self._held = True
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def render_lines(self, crop: Region) -> list[Strip]:
        """Textual's, with what its lines share read once (`RowLines.paint`)."""
        self._paint = self._lines.paint()
        try:
            return super().render_lines(crop)
        finally:
            self._paint = None

    def render_line(self, y: int) -> Strip:
        """The header, or the row at ``y`` on screen: drawn by `RowLines` from the row's
        texts (written first, if this `show` has not yet)."""
        paint = self._paint or self._lines.paint()
        if self.show_header and y < self.header_height:
            return self._lines.line(-1, None, paint)
        index = y - (self.header_height if self.show_header else 0) + self.scroll_offset.y
        order = self._drawn[1]
        if index >= len(order):
            return Strip.blank(paint.width, paint.base)
        key = order[index]
        self._write((key,))
        return self._lines.line(index, self._cells.get(key), paint)

    # Reading a row writes it first: what is read (by a test, a copy, Textual's own
    # rendering) is never a row left unwritten because it was off screen.

    def get_row(self, row_key: RowKey | str) -> list[Text]:
        self._write((_key(row_key),))
        return super().get_row(row_key)

    def get_row_at(self, row_index: int) -> list[Text]:
        self._write(self._drawn[1][row_index : row_index + 1])
        return super().get_row_at(row_index)

    def get_cell(self, row_key: RowKey | str, column_key: ColumnKey | str) -> Text:
        self._write((_key(row_key),))
        return super().get_cell(row_key, column_key)

    def get_cell_at(self, coordinate: Coordinate) -> Text:
        self._write(self._drawn[1][coordinate.row : coordinate.row + 1])
        return super().get_cell_at(coordinate)

    def _reorder(self) -> None:
        """Another set or order of rows at the same widths (a filter typed, a sort, an
        agent come or gone): the table's rows are set to those chosen, in their order
        (`relayout`: one pass, where Textual's own calls cost a pass per row), the new
        ones unwritten."""
        shown = self._shown
        selected = self.selected
        for key in self._drawn[1]:
            if key not in shown:
                self._cells.pop(key, None)
                self._written.pop(key, None)
        relayout(self, list(shown), "agent")
        self._drawn = (self._drawn[0], list(shown))
        if selected in shown:
            self.move_cursor(row=self.get_row_index(selected), animate=False)

    def _refit(self, widths: dict[str, int]) -> None:
        """New widths for the same columns, set in place: the rows stay as they are
        (rebuilding would add every row again), their cells are cut anew as they are
        written."""
        for key, label, _width in self._columns:
            column = self.columns[ColumnKey(key)]
            column.width = widths[key]
            column.label = Text.from_markup(cut(label, widths[key], "head"))
        self._cells.clear()
        self._written.clear()
        self._drawn = (widths, self._drawn[1])
        width = sum(column.get_render_width(self) for column in self.ordered_columns)
        self.virtual_size = Size(width, self.virtual_size.height)
        self.refresh()

    def _rebuild(self, widths: dict[str, int]) -> None:
        """Columns and rows anew (a column came), the cursor kept on the agent it was on."""
        selected = self.selected
        self.clear(columns=True)
        for key, label, _width in self._columns:
            self.add_column(cut(label, widths[key], "head"), key=key, width=widths[key])
        self._cells.clear()
        self._written.clear()
        relayout(self, list(self._shown), "agent")
        self._drawn = (widths, list(self._shown))
        if selected in self._shown:
            self.move_cursor(row=self.get_row_index(selected), animate=False)


def _key(row_key: RowKey | str) -> str:
    return row_key if isinstance(row_key, str) else str(row_key.value)
