"""The libraries the ``listen``, ``redis`` and ``assistant`` extras bring, used the way
pygents uses them, against local stand-ins (no network, no Docker engine, no Redis).

These run in the locked environment and, in ``.ci/run``, in the environment resolved
to the lowest versions ``pyproject.toml`` allows: they are what proves those floors.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import aiohttp
import docker
import grpc
import openai
import pytest
import redis.asyncio
import redis.exceptions
import requests
from aiohttp import web
from jsonschema import Draft202012Validator
from jsonschema.exceptions import relevance
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "test-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hello"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
}


class _ChatCompletions(BaseHTTPRequestHandler):
    """Answers every POST with one fixed chat completion."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = json.dumps(COMPLETION).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the spans, not the server's log."""


@pytest.fixture
def openai_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_the_assistant_extra_traces_an_openai_chat_call_with_its_token_usage(
    openai_server: str,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = openai.AsyncOpenAI(base_url=openai_server, api_key="test", max_retries=0)
        reply = await client.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "hi"}]
        )
        await client.close()
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    assert reply.choices[0].message.content == "hello"
    (span,) = exporter.get_finished_spans()
    assert span.name == "chat test-model"
    assert span.attributes is not None
    assert span.attributes["gen_ai.usage.input_tokens"] == 7
    assert span.attributes["gen_ai.usage.output_tokens"] == 2


def test_the_assistant_extra_docker_client_reports_a_missing_engine_as_a_connection_error(
    tmp_path: Path,
) -> None:
    """Without an engine, the request fails to connect (not, as with docker 7.0 and
    requests 2.32, on the client's own URL scheme)."""
    client = docker.DockerClient(base_url=f"unix://{tmp_path / 'docker.sock'}", version="1.41")
    with warnings.catch_warnings():
        # docker leaves the socket of a failed connection to the garbage collector.
        warnings.simplefilter("ignore", ResourceWarning)
        with pytest.raises(requests.exceptions.ConnectionError) as caught:
            client.ping()
        client.close()
        scheme_refused = isinstance(caught.value, requests.exceptions.InvalidURL)
        del caught  # the error's traceback holds the socket
        gc.collect()
    assert not scheme_refused


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


def test_the_assistant_extra_checks_tool_arguments_against_a_draft_2020_12_schema() -> None:
    """As the assistant checks a model's tool call: the schema is checked once, then each
    call's arguments, the most relevant error first."""
    schema = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 600},
        },
        "required": ["command"],
        "additionalProperties": False,
        "$defs": {"unused": {"$ref": "#/properties/command"}},
    }
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert not list(validator.iter_errors({"command": "ls", "timeout": 5}))
    errors = sorted(validator.iter_errors({"timeout": -1, "extra": 1}), key=relevance)
    messages = [error.message for error in errors]
    assert any("'command' is a required property" in m for m in messages)
    assert any("Additional properties" in m for m in messages)
    assert any("less than or equal to the minimum" in m for m in messages)
