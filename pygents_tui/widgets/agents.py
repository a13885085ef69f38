"""The agents overview: one row per agent the model knows, the finished ones dimmed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text

from pygents_tui._mailboxes import MAILBOX_COLUMN, mailbox_cell
from pygents_tui._plain import plain
from pygents_tui.state import AgentRow, Capacity, DashboardView
from pygents_tui.widgets._panel import NavigableTable
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


def cells(row: AgentRow) -> tuple[str, ...]:
    """The row's cells as text, in the order of ``AgentsTable.COLUMNS``; what a
    finished agent no longer has is a dash, what is not known yet a question mark."""
    gone = row.gone
    if gone:
        depth = context = _GONE
    else:
        depth = str(row.queue_depth) if row.queue_depth is not None else "?"
        context = f"{_capacity(row.context_queue)} {_capacity(row.context_pool)}"
    return (
        row.label,
        row.state,
        depth,
        row.current_tool or "",
        _counts(row),
        str(row.values),
        context,
        sparkline(row.throughput, 8) or "▁" * 8,
    )


class AgentsTable(NavigableTable[Text]):
    """Agents with state, queue, current turn, counts, context sizes and throughput.

    The list that chooses the selected agent: the main screen follows its cursor.
    Rows are keyed by the agent's ``key`` (its name in-process; service, instance
    and agent id in listen mode, where names repeat across processes). Agents that
    have left the registry stay listed, dimmed, until cleared."""

    # Fits 80 columns: widths plus one cell of padding on each side.
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
        ("Rate", "completed turns per second, last 8 s"),
        ("dimmed", "finished: the agent left the registry (c clears)"),
    )
    """What the headers that are symbols (and the dimmed rows) mean: shown in the
    help screen and as the table's tooltip."""

    def __init__(
        self, model: DashboardView, *, id: str | None = None, agent_width: int = 10
    ) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.model = model
        self.agent_width = agent_width  # wider in listen mode: labels carry the service
        self._cells: dict[str, tuple[str, ...]] = {}  # by key: the cells, then "gone"
        self._columns: tuple[tuple[str, str, int], ...] = self.COLUMNS
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

    def _mailboxes(self) -> Mapping[str, MailboxStats] | None:
        """The statistics of the agents the source serves from ``pygents.redis``
        mailboxes (this process's; a listening dashboard serves none).

        Their Mailbox column appears with the first of them, so a program without
        mailboxes keeps a table that fits 80 columns."""
        stats = self.model.mailboxes()
        if stats and self._columns is self.COLUMNS:
            key, label, width = MAILBOX_COLUMN
            self.add_column(label, key=key, width=width, default=Text(""))
            self._columns = (*self.COLUMNS, MAILBOX_COLUMN)
            self._cells = {name: (*c[:-1], "", c[-1]) for name, c in self._cells.items()}
        return None if self._columns is self.COLUMNS else stats

    def show(self, rows: Sequence[AgentRow]) -> None:
        """Add, update (changed cells only) and remove rows to match ``rows``. Each is
        kept as the cells of `COLUMNS`, then whether the agent has gone; the Mailbox
        cell goes in between once that column is shown."""
        mailboxes = self._mailboxes()
        keys = {row.key for row in rows}
        for gone in [key for key in self._cells if key not in keys]:
            self.remove_row(gone)
            del self._cells[gone]
        for row in rows:
            shown = cells(row)
            if mailboxes is not None:
                shown = (*shown, mailbox_cell(mailboxes.get(row.key)))
            shown = (*shown, "gone" if row.gone else "")
            finished = row.gone
            previous = self._cells.get(row.key)
            if previous is None:
                self.add_row(
                    *(
                        _cell(key, value, finished)
                        for (key, _, _), value in zip(self._columns, shown, strict=False)
                    ),
                    key=row.key,
                )
            elif previous != shown:
                restyled = previous[-1] != shown[-1]
                for (column, _label, _width), old, new in zip(
                    self._columns, previous, shown, strict=False
                ):
                    if old != new or restyled:
                        self.update_cell(row.key, column, _cell(column, new, finished))
            self._cells[row.key] = shown
