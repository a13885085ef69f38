"""A live, bounded tail of the selected agent's values, with follow mode and a filter."""

from __future__ import annotations

from collections.abc import Iterable

from pygents_tui.state import DashboardView, ValueRow
from pygents_tui.ui.widgets._panel import FollowingLog, find_row
from pygents_tui.ui.widgets._rows import RowChoice

_FMT = "{at:8.2f}  {tool:<12} {text}"


class ValuesLog(FollowingLog):
    """Follows the newest values until the user scrolls back; ``end`` follows again.
    ``/`` filters the values (by ``tool:`` or their text)."""

    def __init__(self, view: DashboardView, *, id: str | None = None) -> None:
        super().__init__(max_lines=1000, highlight=False, id=id)
        self.view = view
        self.choice = RowChoice()
        self._agent: str | None = None  # the agent whose tail is written
        self._selected: str | None = None  # the agent the screen last asked for
        self._agent_name = ""  # the selected agent's own name, for ``agent:`` terms
        self._written = 0

    def choice_changed(self) -> None:
        """Write the tail anew through the new filter."""
        self._agent, self._written = None, 0
        self.refresh_from(self._selected)

    def refresh_from(self, agent: str | None) -> None:
        self._selected = agent
        if agent != self._agent:
            self.refill(())  # another agent's tail: from its newest value
            self._agent = agent
            self._written = 0
            row = find_row(self.view, agent)
            self._agent_name = row.name if row is not None else ""
        if agent is None:
            return
        total, values = self.view.value_tail(agent)
        fresh = min(total - self._written, len(values))
        if fresh <= 0:
            return
        self.write_lines(self._chosen(list(values)[-fresh:]))
        self._written = total

    def _chosen(self, values: Iterable[ValueRow]) -> list[str]:
        """The values that pass the filter, as the log's lines."""
        epoch, name = self.view.epoch, self._agent_name
        chosen = self.choice.choose(
            values, lambda v: {"agent": name, "tool": v.tool, "text": v.text}
        )
        return [_FMT.format(at=v.at - epoch, tool=v.tool, text=v.text) for v in chosen]
