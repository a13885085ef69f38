"""What every panel of the main screen is: a widget that repaints itself from the
view for the selected agent, and the bases that the panels share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Protocol, Self, TypeVar

from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import DataTable, Log

from pygents_tui.state import AgentRow, DashboardView
from pygents_tui.text._visible import visible

__all__ = ["FollowingLog", "ModelPanel", "NavigableTable", "Panel", "find_row"]

CellType = TypeVar("CellType")


class Panel(Protocol):
    """A panel refreshes itself, and only itself, from the view it was built with.

    The main screen calls ``refresh_from`` on the timer for the panel that is visible
    (and on a change of tab or selection), so a hidden panel costs nothing. ``agent``
    is the selected agent's *key* (its name in-process): a panel must not keep an
    agent (and its context) alive after the program has let go of it. Implementations
    must be cheap when nothing changed, since they run ten or twenty times a second."""

    def refresh_from(self, agent: str | None) -> None: ...


class ModelPanel(Widget):
    """A panel drawn whole by its ``render``, which reads the view (and the selected
    agent, looked up by key) only when Textual paints it: a refresh only marks it."""

    DEFAULT_CSS = "ModelPanel { height: 1fr; }"

    def __init__(self, view: DashboardView, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = view
        # The agent's key, not the agent: a panel must not keep an agent (and its
        # context) alive after the program has let go of it.
        self.agent: str | None = None

    def refresh_from(self, agent: str | None) -> None:
        """Repaint: `render` reads the view and the agent when it runs."""
        self.agent = agent
        self.refresh()


class NavigableTable(DataTable[CellType]):
    """A row-cursor table that also moves with ``j`` / ``k``, as ``↓`` / ``↑`` do.

    The keys belong to the table (not the app), so they act on whichever list has the
    focus and leave other widgets (the filter field) alone. ``COLUMNS`` declares the
    columns (key, label, width) once: they are added on mount, each as wide as
    `column_width` says (the agents table and the timeline then fit them to their
    content and the screen, `pygents_tui.ui.widgets._fit`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]
    COLUMNS: ClassVar[tuple[tuple[str, str, int], ...]] = ()

    def on_mount(self) -> None:
        for key, label, width in self.COLUMNS:
            self.add_column(label, key=key, width=self.column_width(key, width))

    def column_width(self, key: str, width: int) -> int:
        """The width of column ``key``, declared ``width``: a table may widen one."""
        return width


def find_row(view: DashboardView, key: str | None) -> AgentRow | None:
    """The agent row with ``key``, if it is listed."""
    return None if key is None else view.agent_row(key)


class FollowingLog(Log):
    """A log that follows its newest line while scrolled to the bottom and stays put
    when scrolled back; ``end`` jumps to the newest line and follows again.

    Every line is the program's or the network's text: it is written with its
    control characters made visible (`visible`), one line each. Textual's ``Log``
    itself replaces only U+0000..U+0014 and splits a line at a lone ``\r``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "scroll_end", "Follow", show=False, tooltip="follow the newest line again"),
    ]

    FOLLOW_HINT = "scrolled back: not following new lines (end follows again)"
    """What a panel shows under the log while ``following`` is false: a log that
    stopped following must say so, or new lines seem to stop coming."""

    following: reactive[bool] = reactive(True)
    """Whether the log is at its newest line (and so follows what is written)."""

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._show_following()

    def _show_following(self) -> None:
        self.following = self.is_vertical_scroll_end

    def refill(self, lines: Iterable[str]) -> None:
        """Replace every line and follow the newest: a rebuilt log (a new filter) has
        no position worth keeping, and the old one's scroll offset, left standing by
        ``clear``, would leave the new log stuck part-way up, no longer following."""
        self.clear()
        self.scroll_to(y=0, animate=False, immediate=True)
        self.write_lines(lines, scroll_end=True)
        self._show_following()

    def write_lines(self, lines: Iterable[str], scroll_end: bool | None = None) -> Self:
        return super().write_lines(map(visible, lines), scroll_end)

    def write(self, data: str, scroll_end: bool | None = None) -> Self:
        return super().write(visible(data, lines=True), scroll_end)
