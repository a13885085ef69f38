"""The libraries the assistant depends on, used the way it uses them, against local
stand-ins (no network, no Docker engine).

These run in the locked environment and, in ``.ci/run``, in the environment resolved
to the lowest versions the workspace's ``pyproject.toml`` files allow
(``uv sync --resolution lowest-direct``): they are what proves the floors in
``examples/assistant/pyproject.toml``.
"""

from __future__ import annotations

import gc
import json
import threading
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import docker
import openai
import pytest
import requests
from jsonschema import Draft202012Validator
from jsonschema.exceptions import relevance
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
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


async def test_the_openai_client_and_its_instrumentation_trace_a_chat_call_with_its_token_usage(
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


def test_the_docker_client_reports_a_missing_engine_as_a_connection_error(
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


def test_jsonschema_checks_tool_arguments_against_a_draft_2020_12_schema() -> None:
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
