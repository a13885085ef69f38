"""The OTLP receiver: admission, decoding, the gRPC and HTTP transports.

`Receiver` accepts OTLP over gRPC and HTTP on the caller's event loop, admits what
its budgets allow, decodes it off the loop, and hands each decoded `Batch` to a sink
— in ``pygents-tui listen``, the OTLP feeder (`pygents_tui.feeders.FleetModel`),
which writes it into the dashboard's store. The receiver is read-only: it accepts
data and runs nothing; it knows no store and no UI.

The names below load on first use: they need the ``listen`` extra, and asking for
one without it raises a one-line ``MissingExtraError`` naming it.
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
    from pygents_tui.listen.receiver import ListenError, PortInUseError, Receiver, Sink

# The top-level modules the 'listen' extra installs (aiohttp, grpcio, and the OTLP
# messages of opentelemetry-proto with protobuf).
LISTEN_PROVIDES = ("aiohttp", "grpc", "google", "opentelemetry")

_HOMES = {
    "decode": ("Batch", "Limits", "ReceivedRecord", "ReceivedSpan", "ResourceInfo"),
    "receiver": ("ListenError", "PortInUseError", "Receiver", "Sink"),
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
    "Limits",
    "ListenError",
    "PortInUseError",
    "ReceivedRecord",
    "ReceivedSpan",
    "Receiver",
    "ResourceInfo",
    "Sink",
]
