"""The OTLP receiver of ``pygents-tui listen``: gRPC and HTTP, on the caller's loop.

* OTLP/gRPC: ``grpc.aio`` servicers for the trace, logs and metrics services
  generated in ``opentelemetry-proto`` (see `pygents_tui.listen.otlp_grpc`), behind
  the gRPC port's front (`pygents_tui.listen.grpc_front`): it splices HTTP/2
  connections to the gRPC server, on a loopback port of its own, and answers an
  HTTP/1.x request (an OTLP/HTTP exporter given the gRPC port) ``400`` with the HTTP
  port to use, counted as ``misdirected``.
* OTLP/HTTP: ``aiohttp.web`` on ``/v1/traces``, ``/v1/logs`` and ``/v1/metrics``;
  ``application/x-protobuf`` or ``application/json`` bodies, optionally gzipped,
  answered in the request's own encoding with the OTLP status codes (400 for a
  body that cannot be decoded, 413 over the size limit, 415 for another content
  type or encoding).

Both hand the raw bytes to `decode` and the
resulting batch to a `Sink` (the fleet model). The receiver stores nothing,
runs nothing it receives, and binds ``127.0.0.1`` unless told otherwise.

What it takes on at once is bounded (`Limits`, `pygents_tui.listen.admission`):
connections per transport, below the open-files limit; the bytes of bodies being
received or decoded, and one gRPC connection's share of them; the gRPC calls one
connection holds open; the time a message or body may take to arrive, and a
connection may idle. Past a bound a request is refused with a status the exporters
retry on (HTTP 503 or 408, gRPC ``RESOURCE_EXHAUSTED`` or ``DEADLINE_EXCEEDED``) and
counted as ``refused``; a connection past the limit is closed at once, and counted.

Bodies are inflated in worker threads and decoded in processes of their own
(`pygents_tui.listen.offload`), never on the event loop the dashboard shares nor in
a thread sharing its interpreter; an inflated body is charged to the byte budget
before it is parsed.
"""

from __future__ import annotations

import asyncio
import errno
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any, Literal, Protocol, Self

import grpc  # type: ignore[import-untyped]  # grpcio ships no type hints
from aiohttp import web
from google.protobuf import json_format  # type: ignore[import-untyped]  # no stubs installed

from pygents_tui.listen import otlp_grpc
from pygents_tui.listen.admission import (
    ACCEPT_BURST,
    Calls,
    ConnectionGate,
    InFlight,
    connection_limit,
)
from pygents_tui.listen.decode import (
    Batch,
    Limits,
    Malformed,
    Reads,
    Signal,
    response,
)
from pygents_tui.listen.grpc_front import SPLICED_FILES, GrpcFront
from pygents_tui.listen.offload import Offload
from pygents_tui.listen.otlp_http import JSON, PROTOBUF, gunzip, status

__all__ = ["ListenError", "PortInUseError", "Receiver", "Recorder", "Sink"]

Transport = Literal["grpc", "http"]


class Sink(Protocol):
    """Where decoded requests go (the fleet model). Both are called on the event
    loop and must be cheap."""

    def ingest(self, batch: Batch) -> None: ...

    def reject(self, signal: str, kind: str, reason: str) -> None: ...


class Recorder(Protocol):
    """Where accepted requests are also written, as received (``listen --record``):
    called on the event loop, so it must only queue (see `pygents_tui.recording`)."""

    def record(self, signal: Signal, request: bytes, *, json_body: bool = False) -> None: ...


class ListenError(Exception):
    """The receiver could not start; the message is one line, fit to print."""


class PortInUseError(ListenError):
    def __init__(self, transport: str, host: str, port: int) -> None:
        super().__init__(
            f"cannot listen for OTLP/{transport} on {host}:{port}: the port is already in use"
            " (is a collector or another pygents-tui listen running?); choose another port"
            " or turn that transport off"
        )
        self.transport, self.host, self.port = transport, host, port


class Receiver:
    """OTLP over gRPC and HTTP into ``sink``. A port of ``0`` lets the system choose
    (read the bound port back from `grpc_port` / `http_port`); ``None``
    turns that transport off."""

    def __init__(
        self,
        sink: Sink,
        *,
        host: str = "127.0.0.1",
        grpc_port: int | None = 4317,
        http_port: int | None = 4318,
        limits: Limits | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        self.sink = sink
        self.recorder = recorder
        self.host = host
        self.limits = limits if limits is not None else Limits()
        self.requests: Counter[str] = Counter()  # by "transport signal"
        # Attribute entries and nested values the decoder has read, over all requests:
        # the work it did, bounded per request by `Limits.max_reads_per_request`.
        self.values_read = 0
        self._ports = {"grpc": grpc_port, "http": http_port}
        self.grpc_port: int | None = None
        self.http_port: int | None = None
        self._grpc: Any = None
        self._grpc_front: GrpcFront | None = None
        self._grpc_listening: asyncio.AbstractServer | None = None
        self._runner: web.AppRunner | None = None
        self._http: asyncio.AbstractServer | None = None
        # A share below one message would refuse that message on every retry.
        share = max(self.limits.max_in_flight_bytes_per_connection, self.limits.max_message_bytes)
        self._in_flight = InFlight(self.limits.max_in_flight_bytes, share)
        self._calls = Calls(self.limits.max_calls_per_connection)
        self._offload = Offload(self.limits.max_concurrent_decodes, self.limits)
        given = self.limits.max_connections
        self.max_connections = given if given is not None else connection_limit()
        # A gRPC connection is spliced through the front: three descriptors here.
        self.max_grpc_connections = given if given is not None else connection_limit(SPLICED_FILES)

    @property
    def in_flight_bytes(self) -> int:
        """The bytes of requests being received or decoded now, charged to the budget."""
        return self._in_flight.used

    @property
    def json_process_id(self) -> int | None:
        """The process OTLP/JSON bodies are parsed in, while it runs (diagnostics)."""
        return self._offload.process_id

    @property
    def grpc_endpoint(self) -> str | None:
        """``host:port`` as the gRPC exporters take it (with ``insecure=True``)."""
        return f"{self.host}:{self.grpc_port}" if self.grpc_port is not None else None

    @property
    def http_endpoint(self) -> str | None:
        """The base URL, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes it."""
        return f"http://{self.host}:{self.http_port}" if self.http_port is not None else None

    async def start(self) -> None:
        """Bind and serve; `PortInUseError` if a port is taken (nothing is
        left listening then)."""
        try:
            if self._ports["grpc"] is not None:
                await self._start_grpc(self._ports["grpc"])
            if self._ports["http"] is not None:
                await self._start_http(self._ports["http"])
        except BaseException:
            await self.stop()
            raise

    async def stop(self, grace: float = 1.0) -> None:
        if self._grpc_listening is not None:
            listening, self._grpc_listening = self._grpc_listening, None
            listening.close()
        if self._grpc is not None:
            server, self._grpc = self._grpc, None
            await server.stop(grace)
        if self._grpc_front is not None:
            front, self._grpc_front = self._grpc_front, None
            front.close()
        if self._http is not None:
            listening, self._http = self._http, None
            listening.close()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        offload = self._offload
        self._offload = Offload(self.limits.max_concurrent_decodes, self.limits)
        await offload.close()
        self.grpc_port = self.http_port = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- the shared path -----------------------------------------------------------------

    async def _accept(
        self, transport: Transport, signal: Signal, body: bytes, json_body: bool
    ) -> Batch:
        """Decode off the loop (in a process of its own, `Offload`) and hand over;
        `Malformed` (already counted) if it cannot be."""
        self.requests[f"{transport} {signal}"] += 1
        budget = self.limits.max_reads_per_request
        reads = Reads(budget)
        try:
            batch = await self._offload.decode(signal, body, json_body, reads)
        except Malformed as exc:
            self._count(transport, signal, exc)
            raise
        finally:
            self.values_read += budget - reads.left
        self.sink.ingest(batch)
        if self.recorder is not None and batch.items:
            self.recorder.record(signal, body, json_body=json_body)
        return batch

    def _count(self, transport: Transport, signal: Signal, exc: Malformed) -> None:
        kind = "too_large" if exc.status == "too_large" else "malformed"
        self.sink.reject(signal, kind, f"{transport}: {exc}")

    def _refused(self, transport: Transport, signal: str, reason: str) -> str:
        """Count a request or connection refused by a bound; the reason, to answer."""
        self.sink.reject(signal, "refused", f"{transport}: {reason}")
        return reason

    def _busy(self, transport: Transport, signal: Signal) -> str:
        budget = self.limits.max_in_flight_bytes
        return self._refused(
            transport, signal, f"busy: {budget:,} bytes of requests are being received; retry"
        )

    def _busy_peer(self, signal: Signal, what: str) -> str:
        return self._refused("grpc", signal, f"busy: {what} on this connection; retry")

    def _late(self, transport: Transport, signal: Signal) -> str:
        seconds = self.limits.receive_timeout
        return self._refused(transport, signal, f"the request did not arrive within {seconds:g} s")

    # -- gRPC ------------------------------------------------------------------------------

    async def _start_grpc(self, port: int) -> None:
        """The gRPC server on a loopback port of its own, then its front on ``port``."""
        limit = self.limits.max_message_bytes
        connections = self.max_grpc_connections
        server = grpc.aio.server(
            options=[
                ("grpc.so_reuseport", 0),  # a second listener must fail, not share the port
                # Oversized messages must reach the decoder to be counted: gRPC itself
                # refuses only those far beyond the limit.
                ("grpc.max_receive_message_length", 4 * limit),
                ("grpc.max_allowed_incoming_connections", connections),
                ("grpc.max_connection_idle_ms", int(self.limits.idle_timeout * 1000)),
            ],
            # A backstop only: the calls per connection and the byte budget refuse (and
            # count) calls long before, unless many connections each hold their share.
            maximum_concurrent_rpcs=4 * (self.limits.max_in_flight_bytes // limit + 1),
        )
        server.add_generic_rpc_handlers(otlp_grpc.handlers(self))
        try:
            inner = server.add_insecure_port("127.0.0.1:0")
        except RuntimeError:
            inner = 0
        if not inner:
            raise ListenError("cannot listen for OTLP/gRPC: no loopback port is free")
        await server.start()
        self._grpc = server
        front = GrpcFront(
            ("127.0.0.1", inner),
            limit=connections,
            idle_timeout=self.limits.idle_timeout,
            drain_timeout=self.limits.receive_timeout,
            drain_bytes=self.limits.max_message_bytes,
            misdirected=self._misdirected,
            refused=self._too_many_grpc_connections,
        )
        try:
            listening = await asyncio.get_running_loop().create_server(
                front, self.host, port, reuse_port=False, backlog=ACCEPT_BURST
            )
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                raise PortInUseError("gRPC", self.host, port) from None
            raise ListenError(f"cannot listen for OTLP/gRPC on {self.host}:{port}: {exc}") from None
        self._grpc_front, self._grpc_listening = front, listening
        self.grpc_port = int(listening.sockets[0].getsockname()[1])

    def _misdirected(self, signal: str) -> str:
        """Count an HTTP/1.x request sent to the gRPC port; what to answer it (and
        show): the port it should go to."""
        use = f"use port {self.http_port}" if self.http_port else "this receiver takes gRPC only"
        advice = f"OTLP/HTTP sent to the gRPC port {self.grpc_port}: {use}"
        self.sink.reject(signal, "misdirected", advice)
        return advice

    def _too_many_grpc_connections(self, open_now: int) -> None:
        self._refused("grpc", "connections", f"connection closed: {open_now} already open")

    async def export_grpc(
        self, signal: Signal, requests: AsyncIterator[bytes], context: Any
    ) -> Any:
        """One gRPC ``Export`` call, from when it opens: the OTLP response, or the
        call aborted. Busy is RESOURCE_EXHAUSTED: the connection already holds its
        share of open calls, or the message once arrived does not fit its share of
        the byte budget or the budget itself. A message that does not arrive in time
        is DEADLINE_EXCEEDED; both are retried by the exporters. A message that
        cannot be decoded is INVALID_ARGUMENT, too large included, since the same
        request would only fail again.

        Nothing is charged before the message has arrived (its size is not known
        before): a call that never sends one holds only one of its connection's
        calls, so a stalled peer keeps no other sender out."""
        peer = str(context.peer())
        if not self._calls.enter(peer):
            calls = self.limits.max_calls_per_connection
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                self._busy_peer(signal, f"{calls} calls open"),
            )
        try:
            try:
                async with asyncio.timeout(self.limits.receive_timeout):
                    body = await anext(aiter(requests))
            except TimeoutError:
                await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, self._late("grpc", signal))
            except StopAsyncIteration:
                body = b""  # a call closed without a message: an empty request
        finally:
            self._calls.leave(peer)
        size = len(body)
        if not self._in_flight.reserve(size, peer):
            if self._in_flight.used + size > self._in_flight.budget:
                reason = self._busy("grpc", signal)
            else:
                share = self._in_flight.share
                reason = self._busy_peer(signal, f"{share:,} bytes of requests")
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, reason)
        try:
            try:
                batch = await self._accept("grpc", signal, body, json_body=False)
            except Malformed as exc:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
                raise AssertionError("unreachable: abort() raises") from None
            return response(signal, batch.rejected, batch.reason)
        finally:
            self._in_flight.release(size, peer)

    # -- HTTP -----------------------------------------------------------------------------

    async def _start_http(self, port: int) -> None:
        app = web.Application(client_max_size=self.limits.max_message_bytes)
        for signal in ("traces", "logs", "metrics"):
            app.router.add_post(f"/v1/{signal}", self._http_handler(signal))
        # Bodies are decompressed here, against the limit, not by the server. Idle
        # connections close after the idle timeout: between requests by aiohttp, before
        # the first bytes by the gate.
        runner = web.AppRunner(
            app,
            access_log=None,
            auto_decompress=False,
            handle_signals=False,
            keepalive_timeout=self.limits.idle_timeout,
        )
        await runner.setup()
        gate = ConnectionGate(
            runner.server,
            self.max_connections,
            self._too_many_connections,
            self.limits.idle_timeout,
        )
        try:
            listening = await asyncio.get_running_loop().create_server(
                gate, self.host, port, reuse_port=False, backlog=ACCEPT_BURST
            )
        except OSError as exc:
            await runner.cleanup()
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                raise PortInUseError("HTTP", self.host, port) from None
            raise ListenError(f"cannot listen for OTLP/HTTP on {self.host}:{port}: {exc}") from None
        self._runner, self._http = runner, listening
        self.http_port = int(listening.sockets[0].getsockname()[1])

    def _too_many_connections(self, open_now: int) -> None:
        self._refused("http", "connections", f"connection closed: {open_now} already open")

    def _http_handler(self, signal: Signal) -> Any:
        async def handle(request: web.Request) -> web.Response:
            return await self._http_export(signal, request)

        return handle

    async def _http_export(self, signal: Signal, request: web.Request) -> web.Response:
        content_type = request.content_type
        json_body = content_type == JSON
        if content_type != PROTOBUF and not json_body:
            return self._refuse(signal, 415, f"content type must be {PROTOBUF} or {JSON}")
        encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip", ""):
            return self._refuse(signal, 415, "content encoding must be gzip or none")
        limit = self.limits.max_message_bytes
        size = request.content_length
        if size is not None and size > limit:
            return self._too_large(signal, json_body)
        size = limit if size is None else size  # chunked: as large as it may be
        if not self._in_flight.reserve(size):
            return status(503, self._busy("http", signal), json_body, retry_after=1)
        held = [size]  # what this request has charged, grown to its inflated size
        try:
            return await self._http_receive(signal, request, encoding, json_body, held)
        finally:
            self._in_flight.release(held[0])

    def _too_large(self, signal: Signal, json_body: bool) -> web.Response:
        limit = self.limits.max_message_bytes
        self.sink.reject(signal, "too_large", f"http: body over the {limit:,}-byte limit")
        return status(413, f"body over the {limit:,}-byte limit", json_body)

    async def _http_receive(
        self, signal: Signal, request: web.Request, encoding: str, json_body: bool, held: list[int]
    ) -> web.Response:
        """Read, inflate and decode a body charged ``held[0]`` bytes so far: once
        inflated (at most to the size limit, a gzip bomb included) it is charged its
        full size before it is parsed, and refused as busy if that does not fit."""
        limit = self.limits.max_message_bytes
        try:
            async with asyncio.timeout(self.limits.receive_timeout):
                body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._too_large(signal, json_body)
        except TimeoutError:
            return status(408, self._late("http", signal), json_body)
        try:
            if encoding == "gzip":
                compressed = len(body)
                try:
                    body = await self._offload.run(gunzip, body, limit)
                except Malformed as exc:
                    self._count("http", signal, exc)
                    raise
                # aiohttp keeps the compressed body until the request ends: both count.
                more = compressed + len(body) - held[0]
                if more > 0:
                    if not self._in_flight.reserve(more):
                        return status(503, self._busy("http", signal), json_body, retry_after=1)
                    held[0] += more
            batch = await self._accept("http", signal, body, json_body)
        except Malformed as exc:
            return status(413 if exc.status == "too_large" else 400, str(exc), json_body)
        answer = response(signal, batch.rejected, batch.reason)
        if json_body:
            return web.Response(body=json_format.MessageToJson(answer).encode(), content_type=JSON)
        return web.Response(body=answer.SerializeToString(), content_type=PROTOBUF)

    def _refuse(self, signal: Signal, code: int, message: str) -> web.Response:
        self.sink.reject(signal, "unsupported", f"http: {message}")
        return status(code, message, False)
