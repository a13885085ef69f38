"""The assistant example's model layer: messages, scripted and OpenAI-compatible models."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from examples.assistant.model import (
    Message,
    ModelError,
    OpenAICompatibleModel,
    Reply,
    ScriptedModel,
    TextDelta,
    ToolCall,
    model_from_env,
    tool_definitions,
)
from pygents import tool
from pygents.testing import collect

# --------------------------------------------------------------------------- ScriptedModel


async def test_scripted_model_streams_text_in_chunks_then_the_reply() -> None:
    reply = Reply("hello, world!")
    model = ScriptedModel([reply], chunk=5)
    items = await collect(model.stream([Message("user", "hi")], []))
    assert items == [TextDelta("hello"), TextDelta(", wor"), TextDelta("ld!"), reply]


async def test_scripted_model_replies_in_order_and_records_calls() -> None:
    call = ToolCall("c1", "add", {"a": 1})
    model = ScriptedModel([Reply("", (call,)), Reply("done")])
    first = await collect(model.stream([Message("user", "add")], [{"type": "function"}]))
    assert first == [Reply("", (call,))]  # no text, no deltas
    second = await collect(model.stream([Message("user", "add")], []))
    assert second == [TextDelta("done"), Reply("done")]
    assert model.remaining == 0
    assert [len(msgs) for msgs, _ in model.calls] == [1, 1]
    assert model.calls[0][1] == ({"type": "function"},)


async def test_scripted_model_raises_when_script_runs_out() -> None:
    model = ScriptedModel([Reply("only one")])
    await collect(model.stream([], []))
    with pytest.raises(RuntimeError, match="ran out of replies"):
        await collect(model.stream([], []))


async def test_scripted_model_with_a_function_sees_the_conversation() -> None:
    def echo(messages: Any) -> Reply:
        return Reply(f"you said {messages[-1].content}")

    model = ScriptedModel(echo, chunk=100)
    items = await collect(model.stream([Message("user", "ping")], []))
    assert items == [TextDelta("you said ping"), Reply("you said ping")]
    assert model.remaining is None


def test_scripted_model_rejects_a_non_positive_chunk() -> None:
    with pytest.raises(ValueError, match="chunk"):
        ScriptedModel([], chunk=0)


# --------------------------------------------------------------------------- wire format


def test_message_to_openai_for_plain_roles() -> None:
    assert Message("system", "be brief").to_openai() == {"role": "system", "content": "be brief"}
    assert Message("user", "hi").to_openai() == {"role": "user", "content": "hi"}
    assert Message("assistant", "hello").to_openai() == {"role": "assistant", "content": "hello"}


def test_message_to_openai_for_assistant_tool_calls() -> None:
    message = Message(
        "assistant",
        tool_calls=(ToolCall("c1", "add", {"a": 1, "b": 2}), ToolCall("c2", "now", {})),
    )
    wire = message.to_openai()
    assert wire["role"] == "assistant"
    assert wire["content"] is None
    assert wire["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
        },
        {"id": "c2", "type": "function", "function": {"name": "now", "arguments": "{}"}},
    ]
    assert all(isinstance(c["function"]["arguments"], str) for c in wire["tool_calls"])
    json.dumps(wire)  # the whole message is JSON-serializable


def test_message_to_openai_for_tool_results() -> None:
    assert Message("tool", "3", tool_call_id="c1").to_openai() == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "3",
    }


def test_tool_definitions_from_real_tools() -> None:
    @tool()
    async def add(a: int, b: int = 2) -> int:
        """Add two integers."""
        return a + b

    @tool()
    async def undocumented(text: str) -> str:
        return text

    defs = tool_definitions([add, undocumented])
    assert [d["type"] for d in defs] == ["function", "function"]
    add_def, bare_def = (d["function"] for d in defs)
    assert add_def["name"] == "add"
    assert add_def["description"] == "Add two integers."
    assert add_def["parameters"] == add.metadata.input_schema
    assert add_def["parameters"]["properties"]["a"]["type"] == "integer"
    assert add_def["parameters"]["required"] == ["a"]
    assert bare_def == {
        "name": "undocumented",
        "description": "",
        "parameters": undocumented.metadata.input_schema,
    }
    json.dumps(defs)


# --------------------------------------------------------------------------- fake server


@dataclass
class Received:
    method: str = ""
    path: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)


Respond = Callable[[asyncio.StreamWriter], Awaitable[None]]


@dataclass
class FakeServer:
    base_url: str
    received: list[Received]
    respond: list[Respond]


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    """A real HTTP server on 127.0.0.1; set ``respond[0]`` to choose its answer."""
    received: list[Received] = []
    respond: list[Respond] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await reader.readline()).decode().strip()
            method, path, _ = request_line.split(" ")
            headers: dict[str, str] = {}
            while line := (await reader.readline()).decode().strip():
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers["content-length"]))
            received.append(Received(method, path, headers, json.loads(body)))
            await respond[0](writer)
            await writer.drain()
        finally:
            writer.close()
            await writer.wait_closed()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    try:
        yield FakeServer(f"http://127.0.0.1:{port}/v1", received, respond)
    finally:
        srv.close()
        await srv.wait_closed()


def sse(*events: dict[str, Any] | str) -> list[bytes]:
    """Server-sent events, one per item (``"[DONE]"`` as-is)."""
    return [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events]


def chunked_response(pieces: list[bytes]) -> Respond:
    """A 200 event-stream with chunked transfer encoding, one HTTP chunk per piece."""

    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        for piece in pieces:
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")

    return respond


def full_response(status: str, content_type: str, body: bytes) -> Respond:
    """A response with a ``Content-Length`` body (no chunking)."""

    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n".encode()
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    return respond


def delta(**fields: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": fields}]}


async def test_openai_model_streams_text_over_sse_and_chunked_encoding(
    server: FakeServer,
) -> None:
    events = sse(
        delta(role="assistant", content=""),
        delta(content="Hel"),
        delta(content="lo, "),
        delta(content="wörld"),
        {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        "[DONE]",
    )
    # split one event across two HTTP chunks, and put two events in one chunk
    pieces = [events[0] + events[1][:7], events[1][7:], events[2] + events[3], *events[4:]]
    server.respond.append(chunked_response(pieces))
    model = OpenAICompatibleModel(server.base_url, "sk-test", "gpt-test")
    items = await collect(model.stream([Message("user", "hi")], []))
    assert items == [
        TextDelta("Hel"),
        TextDelta("lo, "),
        TextDelta("wörld"),
        Reply("Hello, wörld"),
    ]


async def test_openai_model_assembles_streamed_tool_calls(server: FakeServer) -> None:
    def call(**fields: Any) -> dict[str, Any]:
        return delta(tool_calls=[fields])

    events = sse(
        delta(role="assistant", content=None),
        call(index=0, id="call_a", type="function", function={"name": "add", "arguments": ""}),
        call(index=0, function={"arguments": '{"a": '}),
        call(index=0, function={"arguments": '1, "b"'}),
        call(index=0, function={"arguments": ": 2}"}),
        call(index=1, id="call_b", type="function", function={"name": "broken"}),
        call(index=1, function={"arguments": '{"x": '}),
        {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        "[DONE]",
    )
    server.respond.append(chunked_response(events))
    model = OpenAICompatibleModel(server.base_url, "sk-test", "gpt-test")
    items = await collect(model.stream([Message("user", "add 1 and 2")], []))
    assert items == [
        Reply(
            "",
            (
                ToolCall("call_a", "add", {"a": 1, "b": 2}),
                ToolCall("call_b", "broken", {"_raw": '{"x": '}),
            ),
        )
    ]


async def test_openai_model_reads_a_content_length_stream(server: FakeServer) -> None:
    body = b"".join(sse(delta(content="one "), delta(content="two"), "[DONE]"))
    server.respond.append(full_response("200 OK", "text/event-stream", body))
    model = OpenAICompatibleModel(server.base_url, None, "gpt-test")
    items = await collect(model.stream([Message("user", "count")], []))
    assert items == [TextDelta("one "), TextDelta("two"), Reply("one two")]
    assert "authorization" not in server.received[0].headers


async def test_openai_model_raises_a_clear_error_on_http_401(server: FakeServer) -> None:
    body = json.dumps(
        {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    ).encode()
    server.respond.append(full_response("401 Unauthorized", "application/json", body))
    model = OpenAICompatibleModel(server.base_url, "sk-wrong", "gpt-test")
    with pytest.raises(ModelError, match="HTTP 401") as excinfo:
        await collect(model.stream([Message("user", "hi")], []))
    assert "Incorrect API key provided" in str(excinfo.value)
    assert isinstance(excinfo.value, RuntimeError)


async def test_openai_model_sends_the_right_request(server: FakeServer) -> None:
    server.respond.append(chunked_response(sse(delta(content="ok"), "[DONE]")))

    @tool()
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    tools = tool_definitions([add])
    messages = [
        Message("system", "be brief"),
        Message("user", "add 1 and 2"),
        Message("assistant", tool_calls=(ToolCall("c1", "add", {"a": 1, "b": 2}),)),
        Message("tool", "3", tool_call_id="c1"),
    ]
    model = OpenAICompatibleModel(server.base_url + "/", "sk-test", "gpt-test")
    items = await collect(model.stream(messages, tools))
    assert items[-1] == Reply("ok")

    [request] = server.received
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"
    assert request.body == {
        "model": "gpt-test",
        "messages": [m.to_openai() for m in messages],
        "tools": tools,
        "stream": True,
    }


async def test_openai_model_reports_an_unreachable_server() -> None:
    srv = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    srv.close()
    await srv.wait_closed()
    model = OpenAICompatibleModel(f"http://127.0.0.1:{port}", None, "m")
    with pytest.raises(ModelError, match="cannot connect"):
        await collect(model.stream([], []))


def test_openai_model_rejects_a_non_http_url() -> None:
    with pytest.raises(ValueError, match="http"):
        OpenAICompatibleModel("ftp://example.com", None, "m")


# --------------------------------------------------------------------------- model_from_env


ENV_VARS = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY", "OPENAI_MODEL")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_model_from_env_builds_an_openai_model(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_BASE_URL", "https://api.example.com/v1")
    clean_env.setenv("OPENAI_API_KEY", "sk-env")
    clean_env.setenv("OPENAI_MODEL", "my-model")
    model = model_from_env(ScriptedModel([]))
    assert isinstance(model, OpenAICompatibleModel)
    assert (model.base_url, model.api_key, model.model) == (
        "https://api.example.com/v1",
        "sk-env",
        "my-model",
    )


def test_model_from_env_accepts_api_base_and_defaults_the_model(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("OPENAI_API_BASE", "http://localhost:11434/v1")
    model = model_from_env()
    assert isinstance(model, OpenAICompatibleModel)
    assert (model.base_url, model.api_key, model.model) == (
        "http://localhost:11434/v1",
        None,
        "gpt-4o-mini",
    )


def test_model_from_env_falls_back(clean_env: pytest.MonkeyPatch) -> None:
    fallback = ScriptedModel([])
    assert model_from_env(fallback) is fallback
    with pytest.raises(RuntimeError, match="OPENAI_BASE_URL"):
        model_from_env()
