"""Running turns against their timeouts, and the ones that recently timed out."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from pygents import StopReason
from pygents_tui._plain import plain
from pygents_tui.widgets._panel import ModelPanel
from pygents_tui.widgets._text import bar, seconds


def _colour(fraction: float) -> str:
    if fraction >= 0.9:
        return "red"
    if fraction >= 0.7:
        return "yellow"
    return "green"


class RunningPanel(ModelPanel):
    """A bar per running turn: elapsed against timeout, remaining seconds; red when
    the deadline nears. Timed-out turns stay listed, marked, for a while."""

    def render(self) -> Table:
        model = self.model
        now = model.clock()
        running = model.running_turns()
        timed_out = [r for r in model.recent_turns() if r.stop_reason is StopReason.TIMEOUT][-5:]
        # Wide enough for listen mode's labels (service, instance and agent name).
        labels = (r.agent_label for r in (*running[:40], *timed_out))
        label_width = min(max((len(label) for label in labels), default=0), 28)
        label_width = max(label_width, 11)
        width = max(self.size.width - 39 - label_width, 8)
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column("agent", width=label_width)
        table.add_column("tool", width=11)
        table.add_column("bar", ratio=1)
        table.add_column("time", width=22, no_wrap=True)
        for record in running[:40]:
            elapsed = record.elapsed_at(now)
            fraction = elapsed / record.timeout if record.timeout else 0.0
            colour = _colour(fraction)
            remaining = max(record.timeout - elapsed, 0.0)
            if record.stale:  # its process stopped sending: the clock says nothing now
                status = Text("stale: no news", style="dim italic")
                colour = "dim"
            elif not record.timeout:
                status = Text(f"{seconds(elapsed)} (no timeout known)", style=colour)
            else:
                status = Text(f"{seconds(elapsed)} {seconds(remaining)} left", style=colour)
            table.add_row(
                plain(record.agent_label, style="bold" if record.agent == self.agent else ""),
                plain(record.tool),
                Text(bar(fraction, width), style=colour),
                status,
            )
        for record in reversed(timed_out):
            table.add_row(
                plain(record.agent_label),
                plain(record.tool),
                Text(bar(1.0, width), style="red dim"),
                Text(f"⏱ timed out at {record.timeout:g}s", style="bold red"),
            )
        if not running and not timed_out:
            table.add_row("", Text("no turn is running", style="dim"), "", "")
        return table
