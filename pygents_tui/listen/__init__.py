"""``pygents-tui listen``: the dashboard as an OTLP receiver for a whole fleet.

`Receiver` accepts OTLP over gRPC and HTTP on the caller's event loop and
hands decoded batches to `FleetModel`, which folds spans and the live
records ``pygents_otel`` sends into services, agents and turns behind the same
read API (`DashboardView`) as the in-process model.
The receiver is read-only: it accepts data, stores it bounded, and runs nothing.
"""

from __future__ import annotations

from pygents_tui.listen.decode import Batch, Limits, ReceivedRecord, ReceivedSpan, ResourceInfo
from pygents_tui.listen.fleet import FleetLimits, FleetModel
from pygents_tui.listen.receiver import ListenError, PortInUseError, Receiver, Sink
from pygents_tui.listen.traces import TraceStore, flatten
from pygents_tui.listen.view import DashboardView, SpanNode, TraceTree

__all__ = [
    "Batch",
    "DashboardView",
    "FleetLimits",
    "FleetModel",
    "Limits",
    "ListenError",
    "PortInUseError",
    "ReceivedRecord",
    "ReceivedSpan",
    "Receiver",
    "ResourceInfo",
    "Sink",
    "SpanNode",
    "TraceStore",
    "TraceTree",
    "flatten",
]
