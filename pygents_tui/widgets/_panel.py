"""What every panel of the main screen is: a widget that repaints itself from the
model for the selected agent, and the table base that the navigable lists share."""

from __future__ import annotations

from typing import ClassVar, Protocol, TypeVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable

__all__ = ["NavigableTable", "Panel"]

CellType = TypeVar("CellType")


class Panel(Protocol):
    """A panel refreshes itself, and only itself, from the model it was built with.

    The main screen calls ``refresh_from`` on the timer for the panel that is visible
    (and on a change of tab or selection), so a hidden panel costs nothing. ``agent``
    is the selected agent's *name*: a panel must not keep an agent (and its context)
    alive after the program has let go of it. Implementations must be cheap when
    nothing changed, since they run ten or twenty times a second."""

    def refresh_from(self, agent: str | None) -> None: ...


class NavigableTable(DataTable[CellType]):
    """A row-cursor table that also moves with ``j`` / ``k``, as ``↓`` / ``↑`` do.

    The keys belong to the table (not the app), so they act on whichever list has the
    focus and leave other widgets (the filter field) alone."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]
