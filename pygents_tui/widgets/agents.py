"""The agents overview: one row per registered agent."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from pygents import Agent
from pygents_tui.model import DashboardModel
from pygents_tui.widgets._panel import NavigableTable
from pygents_tui.widgets._text import sparkline

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

    @property
    def selected(self) -> str | None:
        """The name of the agent under the cursor."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def refresh_from(self, agent: str | None = None) -> None:
        """Every live agent's row; ``agent`` is unused (this table *makes* the choice)."""
        self._show(self.model.live_agents())

    def _show(self, live: list[Agent]) -> None:
        """Add, update (changed cells only) and remove rows to match ``live``."""
        model = self.model
        names = {agent.name for agent in live}
        for gone in [name for name in self._cells if name not in names]:
            self.remove_row(gone)
            del self._cells[gone]
        for agent in live:
            state = model.agents.get(agent.name)
            current = agent.current_turn
            queue, pool = agent.context_queue, agent.context_pool
            counts = f"{state.completed}/{state.failed}/{state.timed_out}" if state else "0/0/0"
            cells = (
                agent.name,
                model.phase(agent),
                str(agent.queue_depth),
                current.tool.name if current is not None else "",
                counts,
                str(state.values if state else 0),
                f"{len(queue)}/{queue.limit} {len(pool)}/{pool.limit or '∞'}",
                sparkline(state.throughput if state else (), 8) or "▁" * 8,
            )
            previous = self._cells.get(agent.name)
            if previous is None:
                self.add_row(
                    *(
                        _cell(key, value)
                        for (key, _, _), value in zip(self.COLUMNS, cells, strict=True)
                    ),
                    key=agent.name,
                )
            elif previous != cells:
                for (column, _label, _width), old, new in zip(
                    self.COLUMNS, previous, cells, strict=True
                ):
                    if old != new:
                        self.update_cell(agent.name, column, _cell(column, new))
            self._cells[agent.name] = cells
