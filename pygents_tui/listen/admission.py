"""What the receiver admits before it decodes anything: connections, and bytes in flight.

Decoding is bounded per request (`values.Reads`) and what is kept per store; this
module bounds what many requests at once can take:

* `InFlight`: the bytes of bodies being received or decoded at once, across both
  transports, and each peer's share of them. An HTTP request is admitted only if
  its body (or, when its size is not known yet, the largest body allowed) fits, and
  its inflated size is charged before it is parsed; a gRPC message is charged when
  it has arrived. Past that a request is refused with a status the OTLP exporters
  retry on, and counted. Without it, hundreds of connections each holding an
  almost complete body took gigabytes.
* `Calls`: the gRPC calls each connection holds open, waiting for their message.
* `connection_limit`: how many connections each transport may hold open, below the
  process's open-files limit with headroom left for everything else (the terminal,
  the output capture's temporary file, gRPC's own descriptors; a gRPC connection
  holds three, `grpc_front`). Past it new
  connections are closed at once instead of the process running out of descriptors
  and failing somewhere unrelated.
* `ConnectionGate`: that limit on the HTTP server, counting each refusal (the gRPC
  port's front keeps its own, `grpc_front.GrpcFront`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "ACCEPT_BURST",
    "Calls",
    "ConnectionGate",
    "InFlight",
    "Refuse",
    "connection_limit",
]

_UNLIMITED_FILES: Final = 65_536  # what an unlimited RLIMIT_NOFILE is taken for
_MIN_HEADROOM: Final = 96
# Connections the HTTP server accepts per wake-up (asyncio takes the listen backlog
# for it): all are accepted before the gate has seen any, so the headroom covers it.
ACCEPT_BURST: Final = 32


class InFlight:
    """A byte budget shared by every request being received or decoded, with a
    share per peer.

    Why the shares: without them one peer holding many requests open could take the
    whole budget and keep every other sender out; with them it takes at most
    ``share`` bytes, and the others still find room. A peer is whatever the
    transport tells apart (a gRPC connection: one sender's calls share it); ``None``
    is charged to the budget alone."""

    __slots__ = ("budget", "by_peer", "share", "used")

    def __init__(self, budget: int, share: int | None = None) -> None:
        self.budget = budget
        self.share = budget if share is None else share
        self.used = 0
        self.by_peer: dict[str, int] = {}

    def reserve(self, size: int, peer: str | None = None) -> bool:
        """Take ``size`` bytes of the budget (and of ``peer``'s share) if they fit;
        `release` them after."""
        if self.used + size > self.budget:
            return False
        if peer is not None:
            held = self.by_peer.get(peer, 0)
            if held + size > self.share:
                return False
            self.by_peer[peer] = held + size
        self.used += size
        return True

    def release(self, size: int, peer: str | None = None) -> None:
        self.used -= size
        if peer is not None:
            held = self.by_peer.pop(peer, 0) - size
            if held > 0:
                self.by_peer[peer] = held


class Calls:
    """The calls each peer holds open, at most ``per_peer`` each.

    Why: a gRPC call is admitted before its message arrives (so that one that never
    comes can be ended), and costs nothing until it does. Unbounded, one peer
    opening calls that never send would fill gRPC's own limit on concurrent calls,
    and every other sender would be refused; bounded per peer, it holds only its
    own few, and the calls past them are refused at once."""

    __slots__ = ("open", "per_peer")

    def __init__(self, per_peer: int) -> None:
        self.per_peer = per_peer
        self.open: dict[str, int] = {}

    def enter(self, peer: str) -> bool:
        held = self.open.get(peer, 0)
        if held >= self.per_peer:
            return False
        self.open[peer] = held + 1
        return True

    def leave(self, peer: str) -> None:
        held = self.open.pop(peer, 0) - 1
        if held > 0:
            self.open[peer] = held


def connection_limit(files_each: int = 1) -> int:
    """Connections each of the two transports may hold: half of what the open-files
    limit leaves once the descriptors already open and a headroom (a quarter of the
    limit, at least 96: a burst of accepts, gRPC's and the terminal's descriptors,
    the output capture's file) are set aside, for connections of ``files_each``
    descriptors each (a gRPC one is spliced: `grpc_front.SPLICED_FILES`). At least
    8, so a tiny limit still serves."""
    try:
        import resource
    except ImportError:  # not a Unix: no limit to read, and a modest default
        return 512
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = _UNLIMITED_FILES if soft == resource.RLIM_INFINITY else soft
    headroom = max(_MIN_HEADROOM, files // 4)
    return max(8, (files - headroom - _open_files()) // 2 // files_each)


def _open_files() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # no /proc (macOS): assume few are open yet
        return 16


class ConnectionGate:
    """A protocol factory in front of aiohttp's ``web.Server``: a connection beyond
    ``limit`` open ones is closed as soon as it is accepted (its descriptor freed at
    once), and ``refused`` is called. A connection that sends nothing within
    ``idle_timeout`` is closed too (`_FirstBytes`), so a burst of idle ones locks
    nobody out for long."""

    def __init__(
        self, server: Any, limit: int, refused: Callable[[int], None], idle_timeout: float
    ) -> None:
        self.server = server
        self.limit = limit
        self.refused = refused
        self.idle_timeout = idle_timeout

    def __call__(self) -> asyncio.BaseProtocol:
        open_now = len(self.server.connections)
        if open_now >= self.limit:
            self.refused(open_now)
            return Refuse()
        return _FirstBytes(self.server(), self.idle_timeout)


class _FirstBytes(asyncio.Protocol):
    """aiohttp's request handler, with a deadline for the connection's first bytes.

    Why: aiohttp's ``keepalive_timeout`` closes a connection left idle *after* a
    request; before aiohttp 3.14.5 a fresh connection that never sends one stays open
    for good, holding a descriptor and one of the ``limit`` places. Every call is
    passed on to the handler unchanged; only the deadline is added, and it ends with
    the first bytes (from then on aiohttp's own timeouts apply).
    """

    __slots__ = ("_deadline", "_handler", "_timeout")

    def __init__(self, handler: asyncio.Protocol, timeout: float) -> None:
        self._handler = handler
        self._timeout = timeout
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self._timeout, transport.close)
        self._handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._handler.data_received(data)

    def eof_received(self) -> bool | None:
        return self._handler.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._handler.connection_lost(exc)

    def pause_writing(self) -> None:
        self._handler.pause_writing()

    def resume_writing(self) -> None:
        self._handler.resume_writing()


class Refuse(asyncio.Protocol):
    """A connection past a limit: reset at once, its descriptor freed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.WriteTransport):
            transport.abort()  # a reset, without waiting to flush: the descriptor goes now
        else:
            transport.close()
