"""The agents overview: one row per agent the model knows, the finished ones dimmed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Self

from rich.text import Text
from textual import events
from textual.geometry import Region

from pygents_tui._cut import cut
from pygents_tui._filter import state_words
from pygents_tui._mailboxes import MAILBOX_COLUMN, mailbox_cell
from pygents_tui._plain import plain
from pygents_tui.state import AgentRow, Capacity, DashboardView
from pygents_tui.widgets._attention import tokens_cell
from pygents_tui.widgets._fit import fit_label, fit_widths, split_label
from pygents_tui.widgets._panel import NavigableTable
from pygents_tui.widgets._rows import RowChoice
from pygents_tui.widgets._text import Legend, legend, sparkline

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

_STATE_STYLE = {
    "running": ("running", "green"),
    "paused": ("paused", "yellow"),
    "finished": ("done", "blue"),
    "failed": ("failed", "red"),
    "idle": ("idle", "dim"),
    "stale": ("stale", "dim italic"),  # listen mode: its process stopped sending
}
TOKENS_COLUMN = ("tokens", "Tokens", 6)
_GONE = "—"  # what a finished agent no longer has: a queue, a context


def _cell(column: str, value: str, finished: bool) -> Text:
    """A cell as plain text: agent and tool names are data, never markup nor control
    codes. A finished agent's cells are dimmed."""
    if column == "state":
        label, style = _STATE_STYLE.get(value, (value, ""))
        return plain(label, style="dim" if finished else style)
    return plain(value, style="dim" if finished else "")


def _capacity(capacity: Capacity | None) -> str:
    if capacity is None:
        return "?"
    return f"{capacity.size}/{capacity.limit or '∞'}"


def _counts(row: AgentRow) -> str:
    """Completed / failed / timed out, then ``⊘n`` once a turn was cancelled (a sibling
    failing under a task group cancels the others' turns: without it those turns would
    be counted nowhere, and the agent would look as if it never ran)."""
    counts = f"{row.completed}/{row.failed}/{row.timed_out}"
    return f"{counts} ⊘{row.cancelled}" if row.cancelled else counts


def _sized(row: AgentRow) -> tuple[str, str, str, str]:
    """The queue, counts, values and context cells, whose content sizes their columns;
    what a finished agent no longer has is a dash, what is not known yet a question
    mark."""
    if row.gone:
        depth = context = _GONE
    else:
        depth = str(row.queue_depth) if row.queue_depth is not None else "?"
        context = f"{_capacity(row.context_queue)} {_capacity(row.context_pool)}"
    return depth, _counts(row), str(row.values), context


def cells(
    row: AgentRow, widths: Mapping[str, int], sized: tuple[str, str, str, str] | None = None
) -> tuple[str, ...]:
    """The row's cells as text, in the order of ``AgentsTable.COLUMNS``, each cut to
    its column's width (the label so that the agent's own name stays whole).
    ``sized``: the row's `_sized` cells, when the caller has them already."""
    depth, counts, values, context = sized or _sized(row)
    rate = widths["rate"]
    return (
        fit_label(row.label, row.name, widths["agent"]),
        row.state,
        cut(depth, widths["queue"], "head"),
        cut(row.current_tool or "", widths["current"], "head"),
        cut(counts, widths["counts"], "head"),
        cut(values, widths["values"], "head"),
        cut(context, widths["ctx"], "head"),
        sparkline(row.throughput, rate) or "▁" * rate,
    )


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
        ("counts", "✔/✖/⏱", 9),
        ("values", "Values", 6),
        ("ctx", "Ctx q p", 9),
        ("rate", "Rate", 8),
    )
    LEGEND: ClassVar[Legend] = (
        ("✔/✖/⏱", "turns completed / failed / timed out; ⊘n: n turns cancelled"),
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
    _holding = False  # `show` is updating cells: repaint requests are held
    _held = False  # and one came meanwhile

    def __init__(
        self, model: DashboardView, *, id: str | None = None, agent_width: int = 10
    ) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.model = model
        self.agent_width = agent_width  # the narrowest the Agent column starts at
        self.choice = RowChoice(self.SORTS)
        self._cells: dict[str, tuple[str, ...]] = {}  # by key: the cells, then "gone"
        self._columns: tuple[tuple[str, str, int], ...] = self.COLUMNS
        self._with_mailbox = self._with_tokens = False  # columns that appear when needed
        self._drawn: tuple[dict[str, int], list[str]] = ({}, [])  # widths, row order
        self._fitted = 0  # the width the columns were last fitted to
        self._current = 9  # the Current column's width: grows, never shrinks back
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
        self.show(self.model.agent_rows())

    def choice_changed(self) -> None:
        self.refresh_from()

    def on_resize(self, event: events.Resize) -> None:
        """Widths follow the screen: a new width has the next repaint fit them again
        (none while the view is frozen, which holds the screen as it was). A new
        height alone (the table grows and shrinks with its rows, as a filter changes
        them) changes no width, and must not cost a rebuild."""
        if event.size.width != self._fitted:
            self._fitted = event.size.width
            self._drawn = ({}, [])

    def _mailboxes(self) -> Mapping[str, MailboxStats] | None:
        """The statistics of the agents the source serves from ``pygents.redis``
        mailboxes (this process's; a listening dashboard serves none).

        Their Mailbox column appears with the first of them, so a program without
        mailboxes keeps a table that fits 80 columns."""
        stats = self.model.mailboxes()
        if stats and not self._with_mailbox:
            self._with_mailbox = True
            self._columns = (*self._columns, MAILBOX_COLUMN)
        return stats if self._with_mailbox else None

    def _tokens(self, rows: Sequence[AgentRow]) -> dict[str, str] | None:
        """Each agent's Tokens cell; the column appears with the first model call
        credited to an agent (a program that makes none keeps its table as it was)."""
        model = self.model
        priced = model.priced()
        texts = {row.key: tokens_cell(model.usage(row.key), priced) for row in rows}
        if not self._with_tokens and any(texts.values()):
            self._with_tokens = True
            at = next(i for i, (key, _, _) in enumerate(self._columns) if key == "rate")
            self._columns = (*self._columns[:at], TOKENS_COLUMN, *self._columns[at:])
        return texts if self._with_tokens else None

    def _widths(
        self,
        rows: Sequence[AgentRow],
        sized: Mapping[str, tuple[str, str, str, str]],
        tokens: Mapping[str, str] | None,
    ) -> dict[str, int]:
        """Each column as wide as its content (its header at least), then narrowed to
        the table's width in the order of `GIVE` (Tokens first: the status line has
        the fleet's). ``sized``: each row's `_sized` cells, by key."""
        natural = {key: max(len(label), 3) for key, label, _ in self._columns}
        natural["agent"] = max([self.agent_width, *(len(row.label) for row in rows)])
        for texts in sized.values():
            for key, value in zip(("queue", "counts", "values", "ctx"), texts, strict=True):
                natural[key] = max(natural[key], len(value))
        self._current = min(max([self._current, *(len(r.current_tool or "") for r in rows)]), 24)
        natural.update(state=7, current=self._current, rate=8)
        if self._with_mailbox:
            natural["mailbox"] = MAILBOX_COLUMN[2]
        give = list(self.GIVE)
        if tokens is not None:
            natural["tokens"] = max([natural["tokens"], *map(len, tokens.values())])
            give.insert(0, ("tokens", 0))
        names = max((len(row.name) for row in rows), default=6)
        give = [(key, names if floor < 0 else floor) for key, floor in give]
        available = (self.size.width or self.app.size.width) - 2  # a vertical scrollbar
        return fit_widths(natural, give, available)

    def show(self, rows: Sequence[AgentRow]) -> None:
        """Draw the rows that pass the filter, in the order chosen. The table is rebuilt
        when its widths or its rows' order change; otherwise only changed cells are.
        Each row is kept as its cells, then whether the agent has gone."""
        mailboxes = self._mailboxes()
        sized = {row.key: _sized(row) for row in rows}  # once: widths and cells need them
        tokens = self._tokens(rows)
        widths = self._widths(rows, sized, tokens)
        chosen = self.choice.choose(rows, agent_fields, agent_sort_key)
        shown: dict[str, tuple[str, ...]] = {}
        for row in chosen:
            texts = cells(row, widths, sized[row.key])
            if tokens is not None:  # before the Rate column
                texts = (*texts[:-1], cut(tokens[row.key], widths["tokens"], "head"), texts[-1])
            if mailboxes is not None:
                texts = (*texts, mailbox_cell(mailboxes.get(row.key)))
            shown[row.key] = (*texts, "gone" if row.gone else "")
        drawn = self._drawn[1]
        if widths != self._drawn[0] or _many_changed(drawn, shown):
            self._rebuild(widths, shown)
            return
        if list(shown) != drawn:
            self._reorder(shown)
        self._holding = True  # the cells' updates repaint the table once, at the end
        try:
            for key, texts in shown.items():
                previous = self._cells.get(key)
                if previous == texts:
                    continue
                restyled = previous is None or previous[-1] != texts[-1]
                finished = bool(texts[-1])
                for (column, _label, _width), old, new in zip(
                    self._columns, previous or texts, texts, strict=False
                ):
                    if old != new or restyled:
                        self.update_cell(key, column, _cell(column, new, finished))
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
        """Textual's, except while `show` updates cells: ``update_cell`` asks for a
        repaint of the whole table each time, and marking a widget dirty costs tens of
        microseconds. With 2,000 agents a tick changes a thousand cells and more (every
        Rate cell each second), so the repaints are held and asked for once."""
        if self._holding and not (regions or layout or recompose):
            self._held = True
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _row(self, texts: tuple[str, ...]) -> list[Text]:
        """A row's cells as the table holds them (the last text says if it has gone)."""
        finished = bool(texts[-1])
        return [
            _cell(column, value, finished)
            for (column, _, _), value in zip(self._columns, texts, strict=False)
        ]

    def _reorder(self, shown: dict[str, tuple[str, ...]]) -> None:
        """Another set or order of rows at the same widths (a filter typed, a sort, an
        agent come or gone): the rows that left are removed, the new ones added, and
        all sorted into the order chosen. Textual measures only the added rows, where
        a rebuild measures every cell of every row (with 2,000 agents, a stall of
        100–300 ms for each key typed into the filter)."""
        selected = self.selected
        drawn = set(self._drawn[1])
        for key in drawn - shown.keys():
            self.remove_row(key)
            self._cells.pop(key, None)
        for key, texts in shown.items():
            if key not in drawn:
                self.add_row(*self._row(texts), key=key)
                self._cells[key] = texts
        # Textual sorts by cell values; each row's Agent cell is its own object, so
        # its identity gives the row's place in the order chosen.
        place = {id(self.get_cell(key, "agent")): n for n, key in enumerate(shown)}
        self.sort("agent", key=lambda cell: place[id(cell)])
        self._drawn = (self._drawn[0], list(shown))
        if selected in shown:
            self.move_cursor(row=self.get_row_index(selected), animate=False)

    def _rebuild(self, widths: dict[str, int], shown: dict[str, tuple[str, ...]]) -> None:
        """Columns and rows anew, the cursor kept on the agent it was on."""
        selected = self.selected
        self.clear(columns=True)
        for key, label, _width in self._columns:
            self.add_column(cut(label, widths[key], "head"), key=key, width=widths[key])
        for key, texts in shown.items():
            self.add_row(*self._row(texts), key=key)
        self._cells = dict(shown)
        self._drawn = (widths, list(shown))
        if selected in shown:
            self.move_cursor(row=self.get_row_index(selected), animate=False)


def _many_changed(drawn: list[str], shown: Mapping[str, object]) -> bool:
    """Whether so many rows come or go that a rebuild costs less than moving them:
    Textual re-indexes every row at each ``remove_row``, so removing thousands one by
    one (a filter erased, say) costs more than adding them all again."""
    before = set(drawn)
    moved = len(before - shown.keys()) + len(shown.keys() - before)
    return moved > max(50, len(shown) // 10)


def agent_fields(row: AgentRow) -> dict[str, str]:
    """What the filter matches an agent row against."""
    service, instance, name = split_label(row.label, row.name)
    return {
        "agent": name,
        "service": service,
        "instance": instance,
        "state": state_words(row.state),
        "tool": row.current_tool or "",
        "text": row.label,
    }


def agent_sort_key(row: AgentRow, column: str) -> tuple[float, str]:
    """What sorting by ``column`` orders agent rows by (then by label)."""
    number: float = 0
    text = row.label.casefold()
    if column == "state":
        text = f"{row.state} {text}"
    elif column == "queue":
        number = row.queue_depth if row.queue_depth is not None else -1
    elif column == "current":
        text = f"{row.current_tool or ''} {text}"
    elif column == "failed":
        number = row.failed + row.timed_out
    elif column == "values":
        number = row.values
    return number, text
