"""The libraries the ``listen`` and ``redis`` extras bring, used the way pygents uses
them, against local stand-ins (no network, no Redis).

These run in the locked environment and, in ``.ci/run``, in the environment resolved
to the lowest versions ``pyproject.toml`` allows: they are what proves those floors.
The example assistant's libraries are proved the same way by its own
``examples/assistant/tests/test_libraries.py``.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import aiohttp
import grpc
import pytest
import redis.asyncio
import redis.exceptions
from aiohttp import web
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span


class _RespServer:
    """The few RESP commands a client sends to connect and ping: ``+PONG`` to ``PING``,
    ``+OK`` to the rest. Closing it closes every connection it accepted."""

    def __init__(self) -> None:
        self.writers: list[asyncio.StreamWriter] = []
        self.handlers: list[asyncio.Task[None]] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        self.handlers.append(task)
        try:
            while line := await reader.readline():
                if not line.startswith(b"*"):
                    continue
                parts = []
                for _ in range(int(line[1:])):
                    size = int((await reader.readline())[1:])
                    parts.append((await reader.readexactly(size + 2))[:-2])
                writer.write(b"+PONG\r\n" if parts[0].upper() == b"PING" else b"+OK\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def resp_port() -> AsyncIterator[int]:
    fake = _RespServer()
    server = await asyncio.start_server(fake.serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in fake.writers:
            writer.close()
        await asyncio.gather(*fake.handlers, return_exceptions=True)
        for writer in fake.writers:
            await writer.wait_closed()
        await server.wait_closed()


async def test_the_redis_extra_client_speaks_resp_and_reports_a_closed_port(
    resp_port: int,
) -> None:
    client = redis.asyncio.Redis(host="127.0.0.1", port=resp_port)
    assert await client.ping() is True
    await client.aclose()

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    nobody = redis.asyncio.Redis(host="127.0.0.1", port=closed)
    with pytest.raises(redis.exceptions.ConnectionError):
        await nobody.ping()
    await nobody.aclose()


async def test_the_listen_extra_serves_and_posts_otlp_http_with_aiohttp() -> None:
    received: list[bytes] = []

    async def traces(request: web.Request) -> web.Response:
        received.append(await request.read())
        return web.Response(body=b"", content_type="application/x-protobuf")

    app = web.Application()
    app.router.add_post("/v1/traces", traces)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        payload = trace_service_pb2.ExportTraceServiceRequest(
            resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[Span(name="turn")])])]
        ).SerializeToString()
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"http://127.0.0.1:{port}/v1/traces", data=payload) as response,
        ):
            assert response.status == 200
    finally:
        await runner.cleanup()
    (body,) = received
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    assert request.resource_spans[0].scope_spans[0].spans[0].name == "turn"


class _Collector(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self) -> None:
        self.names: list[str] = []

    async def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: object
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                self.names.extend(span.name for span in scope.spans)
        return trace_service_pb2.ExportTraceServiceResponse()


async def test_the_listen_extra_serves_otlp_grpc_with_the_grpc_asyncio_server() -> None:
    collector = _Collector()
    server = grpc.aio.server()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            request = trace_service_pb2.ExportTraceServiceRequest(
                resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[Span(name="run")])])]
            )
            await stub.Export(request, timeout=30)
    finally:
        await server.stop(None)
    assert collector.names == ["run"]
