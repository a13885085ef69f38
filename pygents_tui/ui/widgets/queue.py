"""The selected agent's pending turns."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from pygents_tui.state import DashboardView
from pygents_tui.text._plain import plain
from pygents_tui.ui.widgets._panel import NavigableTable, find_row


class QueueTable(NavigableTable[Text]):
    """Pending turns of one agent: position, tool, arguments preview, timeout.

    The turns themselves are only within reach in the agent's own process. Where
    the source does not offer the queue's contents (listen mode: only its depth is
    sent), the table shows the depth in one row and the main screen the reason
    above it."""

    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = (
        ("pos", "#", 4),
        ("tool", "Tool", 16),
        ("args", "Arguments", 40),
        ("timeout", "Timeout", 8),
    )

    def __init__(self, view: DashboardView, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", id=id)
        self.view = view
        self._shown: list[tuple[str, ...]] = []

    def refresh_from(self, agent: str | None) -> None:
        rows: list[tuple[str, ...]]
        if agent is not None and self.view.sources.of(agent).offers("queue_contents"):
            rows = list(self.view.queued_turns(agent))
        else:
            rows = self._depth(agent)
        if rows == self._shown:
            return
        self.clear()
        for index, row in enumerate(rows):
            self.add_row(*map(plain, row), key=str(index))  # data, never markup
        self._shown = rows

    def _depth(self, agent: str | None) -> list[tuple[str, ...]]:
        row = find_row(self.view, agent)
        if row is None:
            return []
        depth = "unknown" if row.queue_depth is None else str(row.queue_depth)
        return [("—", f"{depth} waiting", "(contents not sent)", "")]
