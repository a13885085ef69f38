"""The dashboard's panels; each refreshes itself from the view, never per event."""

from pygents_tui.ui.widgets._panel import ModelPanel, NavigableTable, Panel
from pygents_tui.ui.widgets.agents import AgentsTable
from pygents_tui.ui.widgets.context import ContextPanel
from pygents_tui.ui.widgets.events import EventsPanel
from pygents_tui.ui.widgets.output import OutputLog
from pygents_tui.ui.widgets.queue import QueueTable
from pygents_tui.ui.widgets.running import RunningPanel
from pygents_tui.ui.widgets.timeline import TimelineTable
from pygents_tui.ui.widgets.values import ValuesLog

__all__ = [
    "AgentsTable",
    "ContextPanel",
    "EventsPanel",
    "ModelPanel",
    "NavigableTable",
    "OutputLog",
    "Panel",
    "QueueTable",
    "RunningPanel",
    "TimelineTable",
    "ValuesLog",
]
