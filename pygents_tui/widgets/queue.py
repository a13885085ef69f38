"""The selected agent's pending turns."""

from __future__ import annotations

from itertools import islice
from typing import ClassVar

from rich.text import Text

from pygents import AgentRegistry
from pygents_tui._plain import plain
from pygents_tui._preview import preview
from pygents_tui.listen.view import DashboardView
from pygents_tui.widgets._panel import NavigableTable, find_row

_SHOWN = 200


class QueueTable(NavigableTable[Text]):
    """Pending turns of one agent: position, tool, arguments preview, timeout.

    The turns themselves are only within reach in the agent's own process. Where
    the model says the queue's contents are unavailable (listen mode: only its
    depth is sent), the table shows the depth in one row and the main screen the
    reason above it."""

    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = (
        ("pos", "#", 4),
        ("tool", "Tool", 16),
        ("args", "Arguments", 40),
        ("timeout", "Timeout", 8),
    )

    def __init__(self, model: DashboardView, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", id=id)
        self.model = model
        self._shown: list[tuple[str, ...]] = []

    def refresh_from(self, agent: str | None) -> None:
        if self.model.unavailable("queue") is not None:
            rows = self._depth(agent)
        else:
            rows = self._pending(agent)
        if rows == self._shown:
            return
        self.clear()
        for index, row in enumerate(rows):
            self.add_row(*map(plain, row), key=str(index))  # data, never markup
        self._shown = rows

    def _depth(self, agent: str | None) -> list[tuple[str, ...]]:
        row = find_row(self.model, agent)
        if row is None:
            return []
        depth = "unknown" if row.queue_depth is None else str(row.queue_depth)
        return [("—", f"{depth} waiting", "(contents not sent)", "")]

    def _pending(self, agent: str | None) -> list[tuple[str, ...]]:
        found = AgentRegistry.find(agent) if agent is not None else None
        rows: list[tuple[str, ...]] = []
        if found is not None:
            for position, turn in enumerate(islice(found, _SHOWN), start=1):
                arguments = ", ".join(f"{k}={preview(v, 24)}" for k, v in turn.kwargs.items())
                if turn.args:
                    arguments = ", ".join(preview(a, 16) for a in turn.args) + (
                        f", {arguments}" if arguments else ""
                    )
                rows.append(
                    (str(position), turn.tool.name, preview(arguments, 40), f"{turn.timeout:g}s")
                )
        return rows
