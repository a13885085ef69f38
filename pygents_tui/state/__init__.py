"""The dashboard's state, whatever feeds it: agents and their totals, value previews,
the event log, the bounds that keep them, the texts that describe them, what each
source can do, and the read API every panel uses (`DashboardView`).

Pure Python: no Textual, no OpenTelemetry (a test checks it), so that every source —
the in-process subscriber (`pygents_tui.feeders.process.model`), the OTLP receiver
(`pygents_tui.listen`) — writes the same records through the same code, and the
panels read one shape.
"""

from __future__ import annotations

from pygents_tui.state._capabilities import PANEL_NEEDS, Capabilities, Capability, Reply
from pygents_tui.state._contents import (
    POOL_SHOWN,
    QUEUE_SHOWN,
    QueuedTurn,
    bounded_context,
    bounded_queue,
)
from pygents_tui.state._entries import (
    AgentEntry,
    LogEntry,
    Ring,
    Run,
    SenderClock,
    ServiceState,
    StoreLimits,
    TurnEntry,
    ValueEntry,
)
from pygents_tui.state._prices import Budget, Meters, Price
from pygents_tui.state._sources import ACTION_NEEDS, Action, Source, Sources
from pygents_tui.state._store import SPANS_ONLY_STALE_AFTER, Feeder, Store
from pygents_tui.state._tables import Traces
from pygents_tui.state._texts import (
    PAUSED,
    RESUMED,
    RUN_STARTED,
    added,
    evicted,
    queued,
    turn_started,
)
from pygents_tui.state._tokens import CallUsage, read_usage
from pygents_tui.state._totals import (
    HOOK_PHASE,
    PHASES,
    RUN_PHASE,
    THROUGHPUT_SECONDS,
    AgentTotals,
    Throughput,
)
from pygents_tui.state._turns import TurnFacts, by_start, of_agent
from pygents_tui.state._view import (
    AgentRow,
    Capacity,
    ContextContents,
    DashboardView,
    EventRow,
    Panel,
    SpanNode,
    ToolTally,
    TraceTree,
    TurnRow,
    ValueRow,
)

__all__ = [
    "ACTION_NEEDS",
    "HOOK_PHASE",
    "PANEL_NEEDS",
    "PAUSED",
    "PHASES",
    "POOL_SHOWN",
    "QUEUE_SHOWN",
    "RESUMED",
    "RUN_PHASE",
    "RUN_STARTED",
    "SPANS_ONLY_STALE_AFTER",
    "THROUGHPUT_SECONDS",
    "Action",
    "AgentEntry",
    "AgentRow",
    "AgentTotals",
    "Budget",
    "CallUsage",
    "Capabilities",
    "Capability",
    "Capacity",
    "ContextContents",
    "DashboardView",
    "EventRow",
    "Feeder",
    "LogEntry",
    "Meters",
    "Panel",
    "Price",
    "QueuedTurn",
    "Reply",
    "Ring",
    "Run",
    "SenderClock",
    "ServiceState",
    "Source",
    "Sources",
    "SpanNode",
    "Store",
    "StoreLimits",
    "Throughput",
    "ToolTally",
    "TraceTree",
    "Traces",
    "TurnEntry",
    "TurnFacts",
    "TurnRow",
    "ValueEntry",
    "ValueRow",
    "added",
    "bounded_context",
    "bounded_queue",
    "by_start",
    "evicted",
    "of_agent",
    "queued",
    "read_usage",
    "turn_started",
]
