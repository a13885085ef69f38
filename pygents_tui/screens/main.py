"""The main screen: agents on top, the selected agent's panels below."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane

from pygents_tui.model import DashboardModel
from pygents_tui.widgets import (
    AgentsTable,
    ContextPanel,
    EventsPanel,
    QueueTable,
    RunningPanel,
    TimelineTable,
    ValuesLog,
)

TABS: tuple[tuple[str, str], ...] = (
    ("queue", "Queue"),
    ("running", "Running"),
    ("values", "Values"),
    ("context", "Context"),
    ("events", "Events"),
    ("timeline", "Timeline"),
)


class MainScreen(Screen[None]):
    """Composes the panels; the app refreshes them from the model on a timer."""

    def __init__(self, model: DashboardModel) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("", id="status")
        yield AgentsTable(self.model, id="agents")
        with TabbedContent(initial="tab-running", id="tabs"):
            with TabPane("Queue", id="tab-queue"):
                yield QueueTable(id="queue")
            with TabPane("Running", id="tab-running"):
                yield RunningPanel(self.model, id="running")
            with TabPane("Values", id="tab-values"):
                yield ValuesLog(self.model, id="values")
            with TabPane("Context", id="tab-context"):
                yield ContextPanel(self.model, id="context")
            with TabPane("Events", id="tab-events"):
                yield EventsPanel(self.model, id="events")
            with TabPane("Timeline", id="tab-timeline"):
                yield TimelineTable(self.model, id="timeline")
        yield Footer()
