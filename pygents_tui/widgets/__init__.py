"""The dashboard's panels; each refreshes itself from the model, never per event."""

from pygents_tui.widgets._panel import ModelPanel, NavigableTable, Panel
from pygents_tui.widgets.agents import AgentsTable
from pygents_tui.widgets.context import ContextPanel
from pygents_tui.widgets.events import EventsPanel
from pygents_tui.widgets.output import OutputLog
from pygents_tui.widgets.queue import QueueTable
from pygents_tui.widgets.running import RunningPanel
from pygents_tui.widgets.timeline import TimelineTable
from pygents_tui.widgets.values import ValuesLog

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
