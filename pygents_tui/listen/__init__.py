"""``pygents-tui listen``: the dashboard as an OTLP receiver for a whole fleet.

`Receiver` accepts OTLP over gRPC and HTTP on the caller's event loop and
hands decoded batches to `FleetModel`, which folds spans and the live
records ``pygents_otel`` sends into the dashboard's one store (services, agents and
turns behind the read API, `DashboardView`, that the in-process feeder's rows are
read through too).
The receiver is read-only: it accepts data, stores it bounded, and runs nothing.

The names below load on first use. The dashboard's panels import
`pygents_tui.state` (no extra library) with just the ``tui`` extra
installed; only the receiver and the fleet model need the ``listen`` extra, and
asking for them without it raises a one-line ``MissingExtraError`` naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygents._extras import import_from_extra

if TYPE_CHECKING:
    from pygents_tui.listen.decode import (
        Batch,
        Limits,
        ReceivedRecord,
        ReceivedSpan,
        ResourceInfo,
    )
    from pygents_tui.listen.fleet import FleetLimits, FleetModel
    from pygents_tui.listen.receiver import ListenError, PortInUseError, Receiver, Sink
    from pygents_tui.listen.traces import TraceStore, flatten
    from pygents_tui.state import DashboardView, SpanNode, TraceTree

# The top-level modules the 'listen' extra installs (aiohttp, grpcio, and the OTLP
# messages of opentelemetry-proto with protobuf).
LISTEN_PROVIDES = ("aiohttp", "grpc", "google", "opentelemetry")

_HOMES = {
    "decode": ("Batch", "Limits", "ReceivedRecord", "ReceivedSpan", "ResourceInfo"),
    "fleet": ("FleetLimits", "FleetModel"),
    "receiver": ("ListenError", "PortInUseError", "Receiver", "Sink"),
    "traces": ("TraceStore", "flatten"),
    "view": ("DashboardView", "SpanNode", "TraceTree"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def listen_module(name: str) -> Any:
    """``pygents_tui.listen.<name>``, or a one-line ``MissingExtraError`` naming the
    'listen' extra."""
    return import_from_extra(
        f"pygents_tui.listen.{name}", "pygents-tui listen", "listen", LISTEN_PROVIDES
    )


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'pygents_tui.listen' has no attribute {name!r}")
    return getattr(listen_module(module), name)


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
