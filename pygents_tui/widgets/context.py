"""The selected agent's context queue window and context pool."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from pygents import AgentRegistry
from pygents_tui._preview import preview
from pygents_tui.listen.view import Capacity
from pygents_tui.widgets._panel import ModelPanel, find_row


def _size(capacity: Capacity | None) -> str:
    return "unknown" if capacity is None else f"{capacity.size}/{capacity.limit or '∞'}"


class ContextPanel(ModelPanel):
    """Queue window (oldest first) and pool items (id, description, content preview);
    evictions are counted. Where the model has the sizes only (listen mode), the
    sizes, and the main screen says why."""

    def render(self) -> Group:
        if self.model.unavailable("context") is not None:
            return self._sizes()
        agent = AgentRegistry.find(self.agent) if self.agent is not None else None
        if agent is None:
            if self.agent is None:
                return Group("no agent selected")
            name = preview(self.agent, 60)
            return Group(Text(f"{name} has finished: its context went with it"))
        row = find_row(self.model, agent.name)
        evictions = row.evictions if row is not None else 0
        queue, pool = agent.context_queue, agent.context_pool
        window = Table(title=f"queue {len(queue)}/{queue.limit}", expand=True, show_edge=False)
        window.add_column("#", width=3)
        window.add_column("content", ratio=1)
        for index, item in enumerate(queue.items, start=1):
            window.add_row(str(index), Text(preview(item.content, 70)))
        pooled = Table(
            title=f"pool {len(pool)}/{pool.limit or '∞'} · evictions {evictions}",
            expand=True,
            show_edge=False,
        )
        pooled.add_column("id", width=14)
        pooled.add_column("description", ratio=1)
        pooled.add_column("content", ratio=1)
        for item in pool.items[-30:]:
            pooled.add_row(  # user text: plain, never markup
                Text(preview(item.id, 14)),
                Text(preview(item.description, 40)),
                Text(preview(item.content, 40)),
            )
        return Group(window, pooled)

    def _sizes(self) -> Group:
        row = find_row(self.model, self.agent)
        if row is None:
            return Group("no agent selected")
        return Group(
            Text(f"queue  {_size(row.context_queue)}"),
            Text(f"pool   {_size(row.context_pool)} · evictions {row.evictions}"),
        )
