"""The agents overview: one row per registered agent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text

from pygents import Agent
from pygents_tui._mailboxes import MAILBOX_COLUMN, mailbox_cell, served_stats
from pygents_tui.model import DashboardModel
from pygents_tui.widgets._panel import NavigableTable
from pygents_tui.widgets._text import sparkline

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

_STATE_STYLE = {
    "running": ("running", "green"),
    "paused": ("paused", "yellow"),
    "finished": ("done", "blue"),
    "failed": ("failed", "red"),
    "idle": ("idle", "dim"),
}


def _cell(column: str, value: str) -> Text:
    """A cell as plain text: agent and tool names are data, never markup."""
    if column == "state":
        label, style = _STATE_STYLE.get(value, (value, ""))
        return Text(label, style=style)
    return Text(value)


class AgentsTable(NavigableTable[Text]):
    """Agents with state, queue, current turn, counts, context sizes and throughput.

    The list that chooses the selected agent: the main screen follows its cursor."""

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

    def __init__(self, model: DashboardModel, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.model = model
        self._cells: dict[str, tuple[str, ...]] = {}
        self._columns: tuple[tuple[str, str, int], ...] = self.COLUMNS

    def on_mount(self) -> None:
        for key, label, width in self.COLUMNS:
            self.add_column(label, key=key, width=width)

    @property
    def selected(self) -> str | None:
        """The name of the agent under the cursor."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def refresh_from(self, agent: str | None = None) -> None:
        """Every live agent's row; ``agent`` is unused (this table *makes* the choice)."""
        self._show(self.model.live_agents())

    def _mailboxes(self) -> Mapping[str, MailboxStats] | None:
        """The statistics of the agents served from ``pygents.redis`` mailboxes here.

        Their Mailbox column appears with the first of them, so a program without
        mailboxes keeps a table that fits 80 columns."""
        stats = served_stats()
        if stats and self._columns is self.COLUMNS:
            key, label, width = MAILBOX_COLUMN
            self.add_column(label, key=key, width=width, default=Text(""))
            self._columns = (*self.COLUMNS, MAILBOX_COLUMN)
            self._cells = {name: (*cells, "") for name, cells in self._cells.items()}
        return None if self._columns is self.COLUMNS else stats

    def _show(self, live: list[Agent]) -> None:
        """Add, update (changed cells only) and remove rows to match ``live``."""
        model = self.model
        mailboxes = self._mailboxes()
        names = {agent.name for agent in live}
        for gone in [name for name in self._cells if name not in names]:
            self.remove_row(gone)
            del self._cells[gone]
        for agent in live:
            state = model.agents.get(agent.name)
            current = agent.current_turn
            queue, pool = agent.context_queue, agent.context_pool
            counts = f"{state.completed}/{state.failed}/{state.timed_out}" if state else "0/0/0"
            cells: tuple[str, ...] = (
                agent.name,
                model.phase(agent),
                str(agent.queue_depth),
                current.tool.name if current is not None else "",
                counts,
                str(state.values if state else 0),
                f"{len(queue)}/{queue.limit} {len(pool)}/{pool.limit or '∞'}",
                sparkline(state.throughput if state else (), 8) or "▁" * 8,
            )
            if mailboxes is not None:
                cells = (*cells, mailbox_cell(mailboxes.get(agent.name)))
            previous = self._cells.get(agent.name)
            if previous is None:
                self.add_row(
                    *(
                        _cell(key, value)
                        for (key, _, _), value in zip(self._columns, cells, strict=True)
                    ),
                    key=agent.name,
                )
            elif previous != cells:
                for (column, _label, _width), old, new in zip(
                    self._columns, previous, cells, strict=True
                ):
                    if old != new:
                        self.update_cell(agent.name, column, _cell(column, new))
            self._cells[agent.name] = cells
