"""The selected agent's pending turns."""

from __future__ import annotations

from itertools import islice
from typing import ClassVar

from rich.text import Text

from pygents import AgentRegistry
from pygents_tui._preview import preview
from pygents_tui.widgets._panel import NavigableTable

_SHOWN = 200


class QueueTable(NavigableTable[Text]):
    """Pending turns of one agent: position, tool, arguments preview, timeout."""

    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = (
        ("pos", "#", 4),
        ("tool", "Tool", 16),
        ("args", "Arguments", 40),
        ("timeout", "Timeout", 8),
    )

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", id=id)
        self._shown: list[tuple[str, ...]] = []

    def refresh_from(self, agent: str | None) -> None:
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
        if rows == self._shown:
            return
        self.clear()
        for index, row in enumerate(rows):
            self.add_row(*map(Text, row), key=str(index))  # data, never markup
        self._shown = rows
