"""A waterfall of recent turns: when each started and how long it took."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from pygents import StopReason
from pygents_tui._plain import plain
from pygents_tui.state import DashboardView, TurnRow
from pygents_tui.widgets._panel import NavigableTable
from pygents_tui.widgets._text import Legend, legend

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
        Binding(
            "enter",
            "select_cursor",
            "Inspect",
            show=False,
            tooltip="open this turn in the inspector",
        ),
    ]
    WINDOW = 30.0  # seconds shown across the bar column
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
        self, model: DashboardView, *, id: str | None = None, agent_width: int = 12
    ) -> None:
        super().__init__(cursor_type="row", id=id)
        self.model = model
        self.agent_width = agent_width  # wider in listen mode: labels carry the service
        self.tooltip = legend(self.LEGEND)
        self._version = -1
        self._agent: str | None = None
        # Not ``_running``: that is Textual's flag for "this widget's message pump runs".
        self._turns_running = False

    def column_width(self, key: str, width: int) -> int:
        return self.agent_width if key == "agent" else width

    def refresh_from(self, agent: str | None) -> None:
        """Rebuilt when the model changed or the selection did; every time while turns
        run, since their bars grow."""
        model = self.model
        unchanged = model.version == self._version and agent == self._agent
        if unchanged and not self._turns_running:
            return
        self._version, self._agent = model.version, agent
        running = model.running_turns(agent)
        self._turns_running = bool(running)
        records: list[TurnRow] = [*model.recent_turns(agent), *running][-60:]
        now = model.clock()
        # The window ends now while turns run; else at the last activity, so that the
        # bars of a program that ended stay in view however long ago it ended.
        end = now if running else max((r.ended or r.started for r in records), default=now)
        selected = self.selected_uuid
        self.clear()
        for record in records:
            self.add_row(
                plain(record.agent_label),  # names are data, never markup
                plain(record.tool),
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
        width = 40
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
