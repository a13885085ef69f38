"""The agents overview: one row per registered agent, then the finished ones, dimmed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text

from pygents import Agent
from pygents_tui._mailboxes import MAILBOX_COLUMN, mailbox_cell, served_stats
from pygents_tui.model import AgentState, DashboardModel
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
}
_GONE = "—"  # what a finished agent no longer has: a queue, a context


def _cell(column: str, value: str, finished: bool) -> Text:
    """A cell as plain text: agent and tool names are data, never markup. A finished
    agent's cells are dimmed."""
    if column == "state":
        label, style = _STATE_STYLE.get(value, (value, ""))
        return Text(label, style="dim" if finished else style)
    return Text(value, style="dim" if finished else "")


class AgentsTable(NavigableTable[Text]):
    """Agents with state, queue, current turn, counts, context sizes and throughput.

    The list that chooses the selected agent: the main screen follows its cursor.
    Agents that have left the registry stay listed, dimmed, until cleared."""

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
        ("✔/✖/⏱", "turns completed / failed / timed out"),
        ("Values", "values streamed or returned"),
        ("Ctx q p", "context queue size/limit, context pool size/limit (∞: unbounded)"),
        ("Rate", "completed turns per second, last 8 s"),
        ("dimmed", "finished: the agent left the registry (c clears)"),
    )
    """What the headers that are symbols (and the dimmed rows) mean: shown in the
    help screen and as the table's tooltip."""

    def __init__(self, model: DashboardModel, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.model = model
        self._cells: dict[str, tuple[str, ...]] = {}
        self._columns: tuple[tuple[str, str, int], ...] = self.COLUMNS
        self.tooltip = legend(self.LEGEND)

    @property
    def selected(self) -> str | None:
        """The name of the agent under the cursor."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def refresh_from(self, agent: str | None = None) -> None:
        """Every live agent's row, then every finished one's; ``agent`` is unused
        (this table *makes* the choice)."""
        model = self.model
        rows = [self._live(agent) for agent in model.live_agents()]
        rows += [self._finished(state) for state in model.finished_agents()]
        self._show(rows)

    def _live(self, agent: Agent) -> tuple[str, ...]:
        state = self.model.agents.get(agent.name)
        current = agent.current_turn
        queue, pool = agent.context_queue, agent.context_pool
        return (
            agent.name,
            self.model.phase(agent),
            str(agent.queue_depth),
            current.tool.name if current is not None else "",
            f"{state.completed}/{state.failed}/{state.timed_out}" if state else "0/0/0",
            str(state.values if state else 0),
            f"{len(queue)}/{queue.limit} {len(pool)}/{pool.limit or '∞'}",
            sparkline(state.throughput if state else (), 8) or "▁" * 8,
            "",
        )

    @staticmethod
    def _finished(state: AgentState) -> tuple[str, ...]:
        return (
            state.name,
            state.phase,
            _GONE,
            "",
            f"{state.completed}/{state.failed}/{state.timed_out}",
            str(state.values),
            _GONE,
            sparkline(state.throughput, 8) or "▁" * 8,
            "finished",
        )

    def _mailboxes(self) -> Mapping[str, MailboxStats] | None:
        """The statistics of the agents served from ``pygents.redis`` mailboxes here.

        Their Mailbox column appears with the first of them, so a program without
        mailboxes keeps a table that fits 80 columns."""
        stats = served_stats()
        if stats and self._columns is self.COLUMNS:
            key, label, width = MAILBOX_COLUMN
            self.add_column(label, key=key, width=width, default=Text(""))
            self._columns = (*self.COLUMNS, MAILBOX_COLUMN)
            self._cells = {name: (*c[:-1], "", c[-1]) for name, c in self._cells.items()}
        return None if self._columns is self.COLUMNS else stats

    def _show(self, rows: list[tuple[str, ...]]) -> None:
        """Add, update (changed cells only) and remove rows to match ``rows``: each
        the cells of `COLUMNS`, then whether the agent has finished; the Mailbox
        cell goes in between once that column is shown."""
        mailboxes = self._mailboxes()
        if mailboxes is not None:
            rows = [(*r[:-1], mailbox_cell(mailboxes.get(r[0])), r[-1]) for r in rows]
        names = {row[0] for row in rows}
        for gone in [name for name in self._cells if name not in names]:
            self.remove_row(gone)
            del self._cells[gone]
        for cells in rows:
            name, finished = cells[0], bool(cells[-1])
            previous = self._cells.get(name)
            if previous is None:
                self.add_row(
                    *(
                        _cell(key, value, finished)
                        for (key, _, _), value in zip(self._columns, cells, strict=False)
                    ),
                    key=name,
                )
            elif previous != cells:
                restyled = previous[-1] != cells[-1]
                for (column, _label, _width), old, new in zip(
                    self._columns, previous, cells, strict=False
                ):
                    if old != new or restyled:
                        self.update_cell(name, column, _cell(column, new, finished))
            self._cells[name] = cells
