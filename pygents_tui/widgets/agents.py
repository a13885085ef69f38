"""The agents overview: one row per agent the model knows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text

from pygents_tui.listen.view import AgentRow, Capacity, DashboardView
from pygents_tui.widgets._panel import NavigableTable
from pygents_tui.widgets._text import sparkline

_STATE_STYLE = {
    "running": ("running", "green"),
    "paused": ("paused", "yellow"),
    "finished": ("done", "blue"),
    "failed": ("failed", "red"),
    "idle": ("idle", "dim"),
    "stale": ("stale", "dim italic"),  # listen mode: its process stopped sending
}


def _cell(column: str, value: str) -> Text:
    """A cell as plain text: agent and tool names are data, never markup."""
    if column == "state":
        label, style = _STATE_STYLE.get(value, (value, ""))
        return Text(label, style=style)
    return Text(value)


def _capacity(capacity: Capacity | None) -> str:
    if capacity is None:
        return "?"
    return f"{capacity.size}/{capacity.limit or '∞'}"


def cells(row: AgentRow) -> tuple[str, ...]:
    """The row's cells as text, in the order of ``AgentsTable.COLUMNS``."""
    return (
        row.label,
        row.state,
        str(row.queue_depth) if row.queue_depth is not None else "?",
        row.current_tool or "",
        f"{row.completed}/{row.failed}/{row.timed_out}",
        str(row.values),
        f"{_capacity(row.context_queue)} {_capacity(row.context_pool)}",
        sparkline(row.throughput, 8) or "▁" * 8,
    )


class AgentsTable(NavigableTable[Text]):
    """Agents with state, queue, current turn, counts, context sizes and throughput.

    The list that chooses the selected agent: the main screen follows its cursor.
    Rows are keyed by the agent's ``key`` (its name in-process; service, instance
    and agent id in listen mode, where names repeat across processes)."""

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

    def __init__(
        self, model: DashboardView, *, id: str | None = None, agent_width: int = 10
    ) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.model = model
        self.agent_width = agent_width  # wider in listen mode: labels carry the service
        self._cells: dict[str, tuple[str, ...]] = {}

    def on_mount(self) -> None:
        for key, label, width in self.COLUMNS:
            self.add_column(label, key=key, width=self.agent_width if key == "agent" else width)

    @property
    def selected(self) -> str | None:
        """The key of the agent under the cursor."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def refresh_from(self, agent: str | None = None) -> None:
        """Every agent's row; ``agent`` is unused (this table *makes* the choice)."""
        self.show(self.model.agent_rows())

    def show(self, rows: Sequence[AgentRow]) -> None:
        """Add, update (changed cells only) and remove rows to match ``rows``."""
        keys = {row.key for row in rows}
        for gone in [key for key in self._cells if key not in keys]:
            self.remove_row(gone)
            del self._cells[gone]
        for row in rows:
            shown = cells(row)
            previous = self._cells.get(row.key)
            if previous is None:
                self.add_row(
                    *(
                        _cell(key, value)
                        for (key, _, _), value in zip(self.COLUMNS, shown, strict=True)
                    ),
                    key=row.key,
                )
            elif previous != shown:
                for (column, _label, _width), old, new in zip(
                    self.COLUMNS, previous, shown, strict=True
                ):
                    if old != new:
                        self.update_cell(row.key, column, _cell(column, new))
            self._cells[row.key] = shown
