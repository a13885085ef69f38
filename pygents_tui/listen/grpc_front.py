"""The gRPC port's front: it tells an HTTP/2 connection from an HTTP/1.x one by its
first bytes.

Why: grpcio serves HTTP/2 alone and tells its program nothing of a connection that
opens with anything else. An OTLP/HTTP exporter pointed at the gRPC port (4317 for
4318, the commonest mistake) got an HTTP/2 SETTINGS frame back, which its HTTP/1.1
client read as a bad status line; it retried, gave up, and the console showed
nothing, not even a refusal. grpcio has no hook for a failed connection preface, and
no way to take a connection accepted elsewhere, so the front owns the public port and
the gRPC server listens on a loopback port of its own:

* a connection whose first bytes are not an HTTP/1.x request (the HTTP/2 preface,
  and anything else gRPC refuses itself as before) is spliced to the gRPC server: a
  connection of its own there, one per sender, so that gRPC's per-connection limits
  and peers stay as they were;
* one that opens with an HTTP/1.x request line is answered ``400`` at once, with the
  advice in its reason phrase (what the exporters log) and its body, then read to
  its end and closed; it is counted (``misdirected``);
* past ``limit`` open connections a new one is closed at once and counted
  (``refused``); one that has not told what it speaks within ``idle_timeout`` is
  closed.

A spliced connection holds three descriptors in this process (the sender's, and both
ends of the one to gRPC): `SPLICED_FILES`, for the connection limit.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Final

from pygents_tui.listen.admission import Refuse

__all__ = ["SPLICED_FILES", "GrpcFront"]

SPLICED_FILES: Final = 3

# An HTTP/1.x request begins with its method, a token of capitals, and a space; the
# HTTP/2 preface does too ("PRI * HTTP/2.0"), so it is told apart first.
_PREFACE: Final = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_METHOD: Final = re.compile(rb"[A-Z]{1,16}")
_REQUEST_LINE: Final = re.compile(rb"[A-Z]{1,16} (\S{1,2048}) HTTP/1\.\d\r?\n")
_SIGNAL: Final = re.compile(rb"/v1/(traces|logs|metrics)(?:[?#]|$)")


def _speaks_http1(head: bytes) -> bool | None:
    """Whether the first bytes ``head`` open an HTTP/1.x request; ``None``: not known yet."""
    if _PREFACE.startswith(head[: len(_PREFACE)]):
        return None if len(head) < 4 else False  # "PRI " is the HTTP/2 preface's
    method = _METHOD.match(head)
    if method is None:
        return False
    if method.end() < len(head):
        return head[method.end()] == ord(" ")
    return None if len(head) < 16 else False


def _signal(head: bytes) -> str:
    """The OTLP signal the request's path names (``traces``, ...), or ``requests``."""
    line = _REQUEST_LINE.match(head)
    found = _SIGNAL.search(line.group(1)) if line is not None else None
    return found.group(1).decode() if found is not None else "requests"


class GrpcFront:
    """The protocol factory of the gRPC port (see the module docstring). ``grpc`` is
    where the gRPC server listens; ``misdirected(signal)`` counts an HTTP/1.x request
    and returns the advice to answer it with (one line of printable ASCII);
    ``refused(open_now)`` counts a connection past the limit."""

    def __init__(
        self,
        grpc: tuple[str, int],
        *,
        limit: int,
        idle_timeout: float,
        drain_timeout: float,
        drain_bytes: int,
        misdirected: Callable[[str], str],
        refused: Callable[[int], None],
    ) -> None:
        self.grpc = grpc
        self.limit = limit
        self.idle_timeout = idle_timeout
        self.drain_timeout = drain_timeout
        self.drain_bytes = drain_bytes
        self.misdirected = misdirected
        self.refused = refused
        self.connections: set[_Sender] = set()
        self._connecting: set[asyncio.Task[None]] = set()

    def __call__(self) -> asyncio.BaseProtocol:
        open_now = len(self.connections)
        if open_now >= self.limit:
            self.refused(open_now)
            return Refuse()
        return _Sender(self)

    def close(self) -> None:
        """Close every connection still open (the gRPC server has stopped)."""
        for task in list(self._connecting):
            task.cancel()
        for sender in list(self.connections):
            sender.close()

    def splice(self, sender: _Sender) -> None:
        task = asyncio.get_running_loop().create_task(sender.connect(self.grpc))
        self._connecting.add(task)
        task.add_done_callback(self._connecting.discard)


class _Sender(asyncio.Protocol):
    """One connection to the gRPC port: its first bytes read, then spliced to gRPC
    (`_Grpc` is the other end) or answered as HTTP/1.x and drained."""

    __slots__ = ("_deadline", "_drained", "_front", "_head", "_splicing", "_transport", "grpc")

    def __init__(self, front: GrpcFront) -> None:
        self._front = front
        self._transport: asyncio.Transport | None = None
        self._head: bytearray | None = bytearray()  # until told apart; None after
        self._deadline: asyncio.TimerHandle | None = None
        self._drained = -1  # the bytes read of a refused request; -1: not refused
        self._splicing = False  # connecting to gRPC, the first bytes held in ``_head``
        self.grpc: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._front.connections.add(self)
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self._front.idle_timeout, transport.close)

    def data_received(self, data: bytes) -> None:
        grpc = self.grpc
        if grpc is not None:  # the spliced path: everything else is set-up
            grpc.write(data)
            return
        if self._drained >= 0:
            self._drained += len(data)
            if self._drained > self._front.drain_bytes:
                self.close()
            return
        head = self._head
        assert head is not None
        head += data
        if self._splicing:  # reading is paused while gRPC is connected to; held till then
            return
        http1 = _speaks_http1(bytes(head[:16]))
        if http1 is None:
            return  # the idle deadline bounds the wait for more
        self._cancel_deadline()
        if http1:
            self._answer(bytes(head))
        else:
            assert self._transport is not None
            self._splicing = True
            self._transport.pause_reading()
            self._front.splice(self)

    async def connect(self, where: tuple[str, int]) -> None:
        transport, head = self._transport, self._head
        assert transport is not None
        assert head is not None
        loop = asyncio.get_running_loop()
        try:
            grpc, _ = await loop.create_connection(lambda: _Grpc(transport), *where)
        except OSError:
            transport.close()
            return
        if transport.is_closing():
            grpc.close()
            return
        self._head = None
        grpc.write(bytes(head))
        self.grpc = grpc
        transport.resume_reading()

    def _answer(self, head: bytes) -> None:
        """Answer an HTTP/1.x request ``400`` with the advice and end the writing side
        (the sender reads the answer to its end), then read what it still sends, so
        that closing does not reset the answer away, until it closes, its bound, or
        the drain timeout."""
        transport = self._transport
        assert transport is not None
        self._head = None
        self._drained = len(head)
        advice = self._front.misdirected(_signal(head))
        body = f"{advice}\n".encode()
        transport.write(
            f"HTTP/1.1 400 {advice}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        transport.write_eof()
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self._front.drain_timeout, transport.close)

    def eof_received(self) -> bool | None:
        return False  # the transport closes, and with it the gRPC side

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self._front.connections.discard(self)
        if self.grpc is not None:
            self.grpc.close()

    def pause_writing(self) -> None:
        if self.grpc is not None:
            self.grpc.pause_reading()

    def resume_writing(self) -> None:
        if self.grpc is not None and not self.grpc.is_closing():
            self.grpc.resume_reading()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


class _Grpc(asyncio.Protocol):
    """The gRPC server's end of a spliced connection: what it sends goes to the
    sender, and its closing closes the sender's connection (after what is queued)."""

    __slots__ = ("_sender", "_transport")

    def __init__(self, sender: asyncio.Transport) -> None:
        self._sender = sender
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._sender.write(data)

    def eof_received(self) -> bool | None:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._sender.close()

    def pause_writing(self) -> None:
        self._sender.pause_reading()

    def resume_writing(self) -> None:
        if not self._sender.is_closing():
            self._sender.resume_reading()
