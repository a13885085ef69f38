"""Running turns against their timeouts, and the ones that recently timed out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.table import Table
from rich.text import Text

from pygents import StopReason
from pygents_tui.state import DashboardView, TurnRow
from pygents_tui.text._cut import cut_middle
from pygents_tui.text._plain import plain
from pygents_tui.ui.widgets._fit import fit_label, fit_widths
from pygents_tui.ui.widgets._panel import ModelPanel
from pygents_tui.ui.widgets._rows import (
    RowChoice,
    agent_names,
    turn_fields,
    turn_name,
    turn_sort_key,
)
from pygents_tui.ui.widgets._text import bar, seconds

_TIME = 22  # "  6.5s   3.5s left", "◷ timed out at 10s", "stale: no news"
_SHOWN = 40  # running turns drawn at most; the panel is a glance, not a list


def _colour(fraction: float) -> str:
    if fraction >= 0.9:
        return "red"
    if fraction >= 0.7:
        return "yellow"
    return "green"


class RunningPanel(ModelPanel):
    """A bar per running turn: elapsed against timeout, remaining seconds; red when
    the deadline nears. A stuck turn shows why instead of its bar, marked ``⚠``.
    Timed-out turns stay listed, marked, for a while. Another framework's run, known
    running only because its steps arrived, says ``(inferred)``."""

    SORTS: ClassVar[tuple[str, ...]] = ("agent", "tool", "took")

    def __init__(self, view: DashboardView, *, id: str | None = None) -> None:
        super().__init__(view, id=id)
        self.choice = RowChoice(self.SORTS)
        self.marked: str | None = None  # the stuck turn the ``!`` key last jumped to

    def choice_changed(self) -> None:
        self.refresh()

    def _widths(self, turns: Sequence[TurnRow], names: Mapping[str, str]) -> dict[str, int]:
        """Agent and tool as wide as their longest, the bar what is left (8 at least);
        on a narrow screen the tool gives width back first, then the label's service
        and instance, the agent's own name last."""
        natural = {
            "agent": max((len(t.agent_label) for t in turns), default=5),
            "tool": min(max((len(t.tool) for t in turns), default=4), 24),
            "bar": 8,
            "time": _TIME,
        }
        longest = max((len(turn_name(t, names)) for t in turns), default=6)
        give = (("tool", 8), ("agent", longest), ("tool", 4), ("agent", 6))
        widths = fit_widths(natural, give, self.size.width + 1, padding=1)
        widths["bar"] = max(self.size.width - widths["agent"] - widths["tool"] - _TIME - 3, 8)
        return widths

    def render(self) -> Table:
        view = self.view
        now = view.clock()
        names = agent_names(view)
        timed_out = [r for r in view.recent_turns() if r.stop_reason is StopReason.TIMEOUT][-5:]
        turns = self.choice.choose(
            [*view.running_turns()[:_SHOWN], *reversed(timed_out)],
            lambda turn: turn_fields(turn, names),
            lambda turn, column: turn_sort_key(turn, column, now),
        )
        table = Table.grid(padding=(0, 1), expand=True)
        if not turns:
            empty = "no turn matches the filter" if self.choice.query else "no turn is running"
            table.add_column("agent", width=11)
            table.add_column("empty")
            table.add_row("", Text(empty, style="dim"))
            return table
        widths = self._widths(turns, names)
        for column in ("agent", "tool", "bar", "time"):
            table.add_column(column, width=widths[column], no_wrap=True)
        for record in turns:
            label = fit_label(record.agent_label, turn_name(record, names), widths["agent"])
            bold = "bold" if record.agent == self.agent else ""
            bar_text, status = self._state(record, now, widths["bar"])
            stuck = view.stuck_turn(record.key) if record.ended is None else None
            if stuck is not None:  # the reason where the bar was: it says more now
                bar_text = plain(cut_middle(f"⚠ {stuck.text}", widths["bar"]), style="yellow")
                if not record.stale:  # (a stale one's status says so already)
                    status = plain(f"⚠ stuck {seconds(record.elapsed_at(now))}", style="bold")
                if record.key == self.marked:
                    bold = "bold reverse"
            table.add_row(
                plain(label, style=bold),
                plain(cut_middle(record.tool, widths["tool"])),
                bar_text,
                status,
            )
        return table

    @staticmethod
    def _state(record: TurnRow, now: float, width: int) -> tuple[Text, Text]:
        """The bar and the status of a running (or timed-out) turn."""
        if record.stop_reason is StopReason.TIMEOUT:
            return (
                Text(bar(1.0, width), style="red dim"),
                Text(f"◷ timed out at {record.timeout:g}s", style="bold red"),
            )
        elapsed = record.elapsed_at(now)
        fraction = elapsed / record.timeout if record.timeout else 0.0
        colour = _colour(fraction)
        remaining = max(record.timeout - elapsed, 0.0)
        if record.stale:  # its process stopped sending: the clock says nothing now
            status = Text("stale: no news", style="dim italic")
            colour = "dim"
        elif record.inferred:  # another framework's run: its own span has not ended
            status = Text(f"{seconds(elapsed)} (inferred)", style=colour)
        elif not record.timeout:
            status = Text(f"{seconds(elapsed)} (no timeout known)", style=colour)
        else:
            status = Text(f"{seconds(elapsed)} {seconds(remaining)} left", style=colour)
        return Text(bar(fraction, width), style=colour), status
