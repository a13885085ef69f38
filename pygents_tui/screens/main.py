"""The main screen: agents on top, the selected agent's panels below.

The screen owns what it shows: the selected agent (its reactive `MainScreen.
selected`, following the agents table's cursor), whether the view is frozen, and
which panel is visible. The app's timer drains the model and asks the screen to
repaint; the screen repaints the status line, the agents table and the one visible
`Panel`, never the hidden ones.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from pygents import AgentRegistry
from pygents_tui._output import ProgramOutput
from pygents_tui.model import DashboardModel
from pygents_tui.widgets import (
    AgentsTable,
    ContextPanel,
    EventsPanel,
    OutputLog,
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
    ("output", "Output"),
)

_PanelWidget = (
    QueueTable | RunningPanel | ValuesLog | ContextPanel | EventsPanel | TimelineTable | OutputLog
)  # each a Widget and a Panel


class MainScreen(Screen[None]):
    """Composes the panels and repaints the visible one for the selected agent."""

    selected: reactive[str | None] = reactive(None, init=False)
    """The name of the agent under the agents table's cursor (None: no agent)."""

    def __init__(self, model: DashboardModel, output: ProgramOutput) -> None:
        super().__init__()
        self.model = model
        self.output = output
        self.frozen = False
        self._frozen_at = 0
        self._panels: dict[str, _PanelWidget] = {}

    def compose(self) -> ComposeResult:
        model = self.model
        self._status = Static("", id="status")
        self._agents = AgentsTable(model, id="agents")
        panels: tuple[_PanelWidget, ...] = (
            QueueTable(id="queue"),
            RunningPanel(model, id="running"),
            ValuesLog(model, id="values"),
            ContextPanel(model, id="context"),
            EventsPanel(model, id="events"),
            TimelineTable(model, id="timeline"),
            OutputLog(self.output, id="output"),
        )
        self._panels = {f"tab-{key}": panel for (key, _), panel in zip(TABS, panels, strict=True)}
        yield Header(show_clock=False)
        yield self._status
        yield self._agents
        with TabbedContent(initial="tab-running", id="tabs") as self._tabs:
            for (key, label), panel in zip(TABS, panels, strict=True):
                with TabPane(label, id=f"tab-{key}"):
                    yield panel
        yield Footer()

    # -- repainting --------------------------------------------------------------------

    def refresh_view(self, workload_failed: bool = False) -> None:
        """One tick: the status line, then (unless frozen) the agents table and the
        visible panel, in one batch so that the terminal sees a single update."""
        model = self.model
        status = self._status
        if self.frozen:
            fresh = model.processed - self._frozen_at
            status.update(Text(f" FROZEN · +{fresh} new record(s) · space to resume"), layout=False)
            status.add_class("frozen")
            return
        status.remove_class("frozen")
        finished = model.finished
        status.update(
            Text(
                f"{len(AgentRegistry)} agent(s)"
                + (f" · {len(finished)} finished" if finished else "")
                + (f" ({finished.dropped} older dropped)" if finished.dropped else "")
                + f" · {len(model.running)} turn(s) running · {model.completed} done · "
                f"{model.log_total} event(s)"
                + (f" · {model.dropped} dropped" if model.dropped else "")
                + (" · workload failed" if workload_failed else "")
            ),
            layout=False,
        )
        with self.app.batch_update():
            self._agents.refresh_from(None)
            before = self.selected
            self.selected = self._agents.selected  # a change repaints in the watcher
            if self.selected == before:
                self.refresh_panel()

    def refresh_panel(self) -> None:
        """Repaint the visible panel (only) for the selected agent."""
        panel = self._panels.get(self._tabs.active)
        if panel is not None:
            panel.refresh_from(self.selected)

    def watch_selected(self) -> None:
        if not self.frozen:
            self.refresh_panel()

    def toggle_freeze(self) -> None:
        """Stop (or resume) repainting; what arrives meanwhile is counted."""
        self.frozen = not self.frozen
        self._frozen_at = self.model.processed

    def show_tab(self, tab: str) -> None:
        """Show the panel ``tab`` and give the focus to what moves in it, so that its
        keys (``enter`` in the timeline, the arrows) work at once."""
        self._tabs.active = tab
        panel = self._panels.get(tab)
        if panel is not None:
            self._navigable(panel).focus()

    def _navigable(self, panel: _PanelWidget) -> Widget:
        """The widget of ``panel`` that keys move in: the panel itself if it takes the
        focus, the log of the events (not its filter, which would take every letter),
        and otherwise the agents table: Running and Context show the agent chosen there."""
        if isinstance(panel, EventsPanel):
            return panel.log_widget
        return panel if panel.can_focus else self._agents

    # -- following the agents table ----------------------------------------------------

    @on(DataTable.RowHighlighted, "#agents")
    @on(DataTable.RowSelected, "#agents")
    def _follow_cursor(self) -> None:
        self.selected = self._agents.selected

    @on(TabbedContent.TabActivated)
    def _tab_changed(self) -> None:
        if not self.frozen:
            self.refresh_panel()
