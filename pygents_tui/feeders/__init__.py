"""What writes into the dashboard's store: this process's agents, a fleet over OTLP,
Redis mailboxes, a recording. (The OTLP and Redis feeders hold the store they write;
the in-process feeder still extends `pygents_tui.state.Store` with its writers.)

* ``process/`` — this process's agents, through a pygents subscriber (`DashboardModel`).
* ``otlp/`` — a fleet's spans and records, as the receiver decoded them (`FleetModel`).
* ``redis/`` — mailboxes and workers, surveyed from Redis.
* ``replay/`` — a recording, played at a chosen speed (`ReplayView`).

The names below load on first use: all but `DashboardModel` need the ``listen`` extra
(the OTLP messages), and asking for one without it raises a one-line
``MissingExtraError`` naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygents._extras import import_from_extra
from pygents_tui.listen import LISTEN_PROVIDES

if TYPE_CHECKING:
    from pygents_tui.feeders.otlp.fleet import FleetLimits, FleetModel
    from pygents_tui.feeders.process.model import DashboardModel
    from pygents_tui.feeders.replay import MAX_SPEED, SPEEDS, Replay, ReplayView
    from pygents_tui.feeders.traces import TraceStore, flatten

_HOMES = {
    "process.model": ("DashboardModel",),
    "otlp.fleet": ("FleetLimits", "FleetModel"),
    "replay": ("MAX_SPEED", "SPEEDS", "Replay", "ReplayView"),
    "traces": ("TraceStore", "flatten"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'pygents_tui.feeders' has no attribute {name!r}")
    found = import_from_extra(
        f"pygents_tui.feeders.{module}", "pygents-tui listen", "listen", LISTEN_PROVIDES
    )
    return getattr(found, name)


__all__ = [
    "MAX_SPEED",
    "SPEEDS",
    "DashboardModel",
    "FleetLimits",
    "FleetModel",
    "Replay",
    "ReplayView",
    "TraceStore",
    "flatten",
]
