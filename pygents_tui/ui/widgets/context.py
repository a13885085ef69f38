"""The selected agent's context queue window and context pool."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from pygents_tui.state import Capacity
from pygents_tui.text._preview import preview
from pygents_tui.ui.widgets._panel import ModelPanel, find_row


def _size(capacity: Capacity | None) -> str:
    return "unknown" if capacity is None else f"{capacity.size}/{capacity.limit or '∞'}"


class ContextPanel(ModelPanel):
    """Queue window (oldest first) and pool items (id, description, content preview);
    evictions are counted. Where the source does not offer the items (listen mode:
    only the sizes are sent), the sizes, and the main screen says why."""

    def render(self) -> Group:
        view = self.view
        if not view.sources.of(self.agent).offers("context_items"):
            return self._sizes()
        if self.agent is None:
            return Group("no agent selected")
        contents = view.context_contents(self.agent)
        if contents is None:
            name = preview(self.agent, 60)
            return Group(Text(f"{name} has finished: its context went with it"))
        row = find_row(view, self.agent)
        evictions = row.evictions if row is not None else 0
        queue, pool = contents.queue, contents.pool
        window = Table(title=f"queue {queue.size}/{queue.limit}", expand=True, show_edge=False)
        window.add_column("#", width=3)
        window.add_column("content", ratio=1)
        for index, item in enumerate(contents.queue_items, start=1):
            window.add_row(str(index), Text(item))
        pooled = Table(
            title=f"pool {pool.size}/{pool.limit or '∞'} · evictions {evictions}",
            expand=True,
            show_edge=False,
        )
        pooled.add_column("id", width=14)
        pooled.add_column("description", ratio=1)
        pooled.add_column("content", ratio=1)
        for item_id, description, content in contents.pool_items:
            pooled.add_row(Text(item_id), Text(description), Text(content))  # plain, not markup
        return Group(window, pooled)

    def _sizes(self) -> Group:
        row = find_row(self.view, self.agent)
        if row is None:
            return Group("no agent selected")
        return Group(
            Text(f"queue  {_size(row.context_queue)}"),
            Text(f"pool   {_size(row.context_pool)} · evictions {row.evictions}"),
        )
