"""A live, bounded tail of the selected agent's values, with follow mode."""

from __future__ import annotations

from pygents_tui.state import DashboardView
from pygents_tui.widgets._panel import FollowingLog

_FMT = "{at:8.2f}  {tool:<12} {text}"


class ValuesLog(FollowingLog):
    """Follows the newest values until the user scrolls back; ``end`` follows again."""

    def __init__(self, model: DashboardView, *, id: str | None = None) -> None:
        super().__init__(max_lines=1000, highlight=False, id=id)
        self.model = model
        self._agent: str | None = None
        self._written = 0

    def refresh_from(self, agent: str | None) -> None:
        if agent != self._agent:
            self.refill(())  # another agent's tail: from its newest value
            self._agent = agent
            self._written = 0
        if agent is None:
            return
        total, values = self.model.value_tail(agent)
        fresh = min(total - self._written, len(values))
        if fresh <= 0:
            return
        tail = list(values)[-fresh:]
        epoch = self.model.epoch
        self.write_lines(_FMT.format(at=v.at - epoch, tool=v.tool, text=v.text) for v in tail)
        self._written = total
