"""A waterfall of recent turns: when each started and how long it took."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from pygents import StopReason
from pygents_tui.state import DashboardView, TurnRow
from pygents_tui.text._cut import cut, cut_middle
from pygents_tui.text._plain import plain
from pygents_tui.ui.widgets._fit import fit_label, fit_widths
from pygents_tui.ui.widgets._panel import NavigableTable
from pygents_tui.ui.widgets._rows import (
    RowChoice,
    agent_names,
    turn_fields,
    turn_name,
    turn_sort_key,
)
from pygents_tui.ui.widgets._text import Legend, legend

_GLYPH = {
    StopReason.COMPLETED: ("█", "green"),
    StopReason.ERROR: ("█", "red"),
    StopReason.TIMEOUT: ("█", "magenta"),
    StopReason.CANCELLED: ("█", "grey50"),
}


class TimelineTable(NavigableTable[object]):
    """Recent turns of the selected agent (all agents if none), newest last; ``enter``
    opens the turn inspector."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Inspect", tooltip="open this turn in the inspector"),
    ]
    WINDOW = 30.0  # seconds shown across the bar column
    SORTS: ClassVar[tuple[str, ...]] = ("agent", "tool", "took", "started")
    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = (
        ("agent", "Agent", 12),
        ("tool", "Tool", 12),
        ("took", "Took", 7),
        ("bar", "Waterfall (last 30 s)", 40),
    )

    LEGEND: ClassVar[Legend] = (
        ("█ green", "completed"),
        ("█ red", "failed"),
        ("█ magenta", "timed out"),
        ("█ grey", "cancelled"),
        ("▒ cyan", "still running"),
        ("window", "the last 30 s up to now; when nothing runs, up to the last turn's end"),
    )
    """What the waterfall's colours mean: shown in the help screen and as the tooltip."""

    def __init__(
        self, view: DashboardView, *, id: str | None = None, agent_width: int = 12
    ) -> None:
        super().__init__(cursor_type="row", id=id)
        self.view = view
        self.agent_width = agent_width  # the narrowest the Agent column starts at
        self.tooltip = legend(self.LEGEND)
        self.choice = RowChoice(self.SORTS)
        self._choice_version = 0
        self._widths: dict[str, int] = {}
        self._version = -1
        self._agent: str | None = None
        # Not ``_running``: that is Textual's flag for "this widget's message pump runs".
        self._turns_running = False

    def column_width(self, key: str, width: int) -> int:
        return self.agent_width if key == "agent" else width

    def choice_changed(self) -> None:
        self.refresh_from(self._agent)

    def on_resize(self) -> None:
        """Widths follow the screen: the next repaint fits them again."""
        self._version = -1

    def _fit(self, records: Sequence[TurnRow], names: Mapping[str, str]) -> None:
        """Agent and tool as wide as their longest, the waterfall what is left (20 to
        80 cells); on a narrow screen the bar gives width back first, then the tool,
        the label's service and instance, the agent's own name last. The columns are
        made anew only when their widths change."""
        natural = {
            "agent": max([self.agent_width, *(len(r.agent_label) for r in records)]),
            "tool": min(max([4, *(len(r.tool) for r in records)]), 24),
            "took": 7,
            "bar": 20,
        }
        longest = max((len(turn_name(r, names)) for r in records), default=6)
        give = (("tool", 8), ("agent", longest), ("tool", 4), ("agent", 6))
        available = (self.size.width or self.app.size.width) - 2  # a vertical scrollbar
        widths = fit_widths(natural, give, available)
        spare = available - sum(width + 2 for width in widths.values())
        widths["bar"] = min(max(widths["bar"] + spare, 20), 80)
        if widths != self._widths:
            self.clear(columns=True)
            for key, label, _width in self.COLUMNS:
                label = label if key != "bar" else f"Waterfall (last {self.WINDOW:g} s)"
                self.add_column(cut(label, widths[key], "head"), key=key, width=widths[key])
            self._widths = widths

    def refresh_from(self, agent: str | None) -> None:
        """Rebuilt when the view, the selection or the filter changed; every time
        while turns run, since their bars grow."""
        view = self.view
        unchanged = (
            view.version == self._version
            and agent == self._agent
            and self.choice.version == self._choice_version
        )
        if unchanged and not self._turns_running:
            return
        self._version, self._agent = view.version, agent
        self._choice_version = self.choice.version
        running = view.running_turns(agent)
        self._turns_running = bool(running)
        records: list[TurnRow] = [*view.recent_turns(agent), *running][-60:]
        now = view.clock()
        # The window ends now while turns run; else at the last activity, so that the
        # bars of a program that ended stay in view however long ago it ended.
        end = now if running else max((r.ended or r.started for r in records), default=now)
        names = agent_names(view)
        records = self.choice.choose(
            records,
            lambda turn: turn_fields(turn, names),
            lambda turn, column: turn_sort_key(turn, column, now),
        )
        selected = self.selected_uuid
        self.clear()
        self._fit(records, names)
        widths = self._widths
        for record in records:
            label = fit_label(record.agent_label, turn_name(record, names), widths["agent"])
            self.add_row(
                plain(label),  # names are data, never markup
                plain(cut_middle(record.tool, widths["tool"])),
                f"{record.elapsed_at(now):.2f}s",
                self._bar(record, now, end),
                key=record.key,
            )
        if selected is not None and selected in self.rows:
            self.move_cursor(row=self.get_row_index(selected), scroll=False)
        elif self.row_count:
            self.move_cursor(row=self.row_count - 1, scroll=True)

    def _bar(self, record: TurnRow, now: float, window_end: float) -> Text:
        """The turn's bar in the `WINDOW` seconds up to ``window_end``; at least one
        cell wide, even for a turn that took no time at the window's very end."""
        width = self._widths.get("bar", 40)
        start = window_end - self.WINDOW
        left = int((record.started - start) / self.WINDOW * width)
        end = record.ended if record.ended is not None else now
        right = int((end - start) / self.WINDOW * width)
        left = min(max(left, 0), width - 1)
        right = min(max(right, left + 1), width)
        running = ("▒", "cyan")
        glyph, colour = _GLYPH[record.stop_reason] if record.stop_reason else running
        return Text(" " * left + glyph * (right - left), style=colour)

    @property
    def selected_uuid(self) -> str | None:
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return str(key) if key is not None else None
