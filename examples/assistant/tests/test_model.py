"""The assistant example's model layer: messages, the scripted model, and the official
``openai`` client against a local chat-completions server (``chat_server``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from assistant.model import (
    Message,
    ModelError,
    Reply,
    ScriptedModel,
    TextDelta,
    ToolCall,
    Usage,
    tool_definitions,
)
from assistant.openai_model import (
    DEFAULT_MODEL,
    OFFICIAL_BASE_URL,
    OpenAIModel,
    model_from_env,
)
from pygents import tool
from pygents.testing import collect

from .chat_server import (
    ChatServer,
    chat_stream,
    delta,
    serve_chat,
    sse,
    streamed,
    usage_chunk,
    whole,
)

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


def test_scripted_model_says_it_is_offline_in_its_repr() -> None:
    def step(messages: Any) -> Reply:
        return Reply("")

    assert repr(ScriptedModel([Reply("a"), Reply("b")])) == "ScriptedModel(offline, 2 replies)"
    assert repr(ScriptedModel(step)) == "ScriptedModel(offline, replies from step())"


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


# --------------------------------------------------------------------------- OpenAIModel


@pytest.fixture
async def server() -> AsyncIterator[ChatServer]:
    """A chat-completions server on 127.0.0.1; ``server.answer(...)`` queues its answers."""
    async with serve_chat() as running:
        yield running


@pytest.fixture
async def open_models() -> AsyncIterator[list[OpenAIModel]]:
    """Models made by a test, closed after it (their clients hold connections)."""
    made: list[OpenAIModel] = []
    yield made
    for model in made:
        await model.aclose()


@pytest.fixture
def make_model(
    server: ChatServer, open_models: list[OpenAIModel]
) -> Any:  # a factory: (api_key=..., **options) -> OpenAIModel
    def make(api_key: str | None = "sk-test", **options: Any) -> OpenAIModel:
        options.setdefault("max_retries", 0)
        model = OpenAIModel("gpt-test", base_url=server.base_url, api_key=api_key, **options)
        open_models.append(model)
        return model

    return make


async def test_openai_model_streams_text_over_sse_and_chunked_encoding(
    server: ChatServer, make_model: Any
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
    server.answer(streamed(pieces))
    items = await collect(make_model().stream([Message("user", "hi")], []))
    assert items == [
        TextDelta("Hel"),
        TextDelta("lo, "),
        TextDelta("wörld"),
        Reply("Hello, wörld"),
    ]


async def test_openai_model_assembles_streamed_tool_calls(
    server: ChatServer, make_model: Any
) -> None:
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
    server.answer(streamed(events))
    items = await collect(make_model().stream([Message("user", "add 1 and 2")], []))
    assert items == [
        Reply(
            "",
            (
                ToolCall("call_a", "add", {"a": 1, "b": 2}),
                ToolCall("call_b", "broken", {"_raw": '{"x": '}),
            ),
        )
    ]


async def test_openai_model_continues_a_tool_call_whose_fragments_have_no_index(
    server: ChatServer, make_model: Any
) -> None:
    """Some compatible servers leave ``index`` out: a new id starts a new call."""
    events = sse(
        delta(tool_calls=[{"id": "c1", "function": {"name": "now", "arguments": "{}"}}]),
        delta(tool_calls=[{"id": "c2", "function": {"name": "add", "arguments": '{"a"'}}]),
        delta(tool_calls=[{"function": {"arguments": ": 1}"}}]),
        "[DONE]",
    )
    server.answer(streamed(events))
    items = await collect(make_model().stream([Message("user", "go")], []))
    assert items == [Reply("", (ToolCall("c1", "now", {}), ToolCall("c2", "add", {"a": 1})))]


async def test_openai_model_yields_the_token_usage_before_the_reply(
    server: ChatServer, make_model: Any
) -> None:
    server.answer(chat_stream("four words of text", usage=(7, 2)))
    items = await collect(make_model().stream([Message("user", "hi")], []))
    assert items == [
        TextDelta("four word"),
        TextDelta("s of text"),
        Usage(input_tokens=7, output_tokens=2),
        Reply("four words of text"),
    ]


async def test_openai_model_reads_a_content_length_stream_and_sends_no_key_without_one(
    server: ChatServer, make_model: Any
) -> None:
    body = b"".join(sse(delta(content="one "), delta(content="two"), usage_chunk(3, 2), "[DONE]"))
    server.answer(whole(200, "text/event-stream", body))
    items = await collect(make_model(api_key=None).stream([Message("user", "count")], []))
    assert items == [TextDelta("one "), TextDelta("two"), Usage(3, 2), Reply("one two")]
    assert "authorization" not in server.received[0].headers


async def test_openai_model_raises_a_clear_error_on_http_401(
    server: ChatServer, make_model: Any
) -> None:
    body = json.dumps(
        {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    ).encode()
    server.answer(whole(401, "application/json", body))
    model = make_model(api_key="sk-wrong")
    with pytest.raises(ModelError, match="HTTP 401") as excinfo:
        await collect(model.stream([Message("user", "hi")], []))
    message = str(excinfo.value)
    assert "Incorrect API key provided" in message
    assert f"{server.base_url}/chat/completions" in message  # where
    assert "check OPENAI_API_KEY" in message  # and what to do
    assert isinstance(excinfo.value, RuntimeError)


async def test_openai_model_errors_never_show_the_key_and_stay_short(
    server: ChatServer, make_model: Any
) -> None:
    key = "sk-secret-0123456789"
    echo = {"error": {"message": f"key {key} refused; " + "details " * 500}}
    server.answer(whole(403, "application/json", json.dumps(echo).encode()))
    with pytest.raises(ModelError) as excinfo:
        await collect(make_model(api_key=key).stream([Message("user", "hi")], []))
    message = str(excinfo.value)
    assert key not in message
    assert "key *** refused" in message
    assert len(message) < 500


async def test_openai_model_leaves_messages_whole_for_a_placeholder_key(
    server: ChatServer, make_model: Any
) -> None:
    """Local servers take any key; a one-letter one is no secret to mask."""
    body = json.dumps({"error": {"message": "Incorrect API key provided"}}).encode()
    server.answer(whole(401, "application/json", body))
    with pytest.raises(ModelError) as excinfo:
        await collect(make_model(api_key="k").stream([Message("user", "hi")], []))
    assert "Incorrect API key provided (check OPENAI_API_KEY)" in str(excinfo.value)


async def test_openai_model_reports_an_error_event_in_the_stream(
    server: ChatServer, make_model: Any
) -> None:
    events = sse(delta(content="par"), {"error": {"message": "the model overloaded"}})
    server.answer(streamed(events))
    stream = make_model().stream([Message("user", "hi")], [])
    assert await anext(stream) == TextDelta("par")
    with pytest.raises(ModelError, match="reported an error: the model overloaded"):
        await anext(stream)


async def test_openai_model_retries_a_server_error_through_the_client(
    server: ChatServer, make_model: Any
) -> None:
    async def busy(request: web.Request) -> web.StreamResponse:
        # retry-after-ms: the client waits 1 ms, not its default backoff
        return web.json_response(
            {"error": {"message": "busy"}}, status=503, headers={"retry-after-ms": "1"}
        )

    server.answer(busy, chat_stream("ok"))
    items = await collect(make_model(max_retries=1).stream([Message("user", "hi")], []))
    assert items[-1] == Reply("ok")
    assert len(server.received) == 2


async def test_openai_model_gives_up_on_a_server_that_does_not_answer(
    server: ChatServer, make_model: Any
) -> None:
    release = asyncio.Event()

    async def silent(request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.json_response({})

    server.answer(silent)
    try:
        with pytest.raises(ModelError, match=r"did not answer within 0\.2s"):
            await collect(make_model(timeout=0.2).stream([Message("user", "hi")], []))
    finally:
        release.set()


async def test_openai_model_sends_the_right_request(server: ChatServer, make_model: Any) -> None:
    server.answer(chat_stream("ok"))

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
    model = OpenAIModel("gpt-test", base_url=server.base_url + "/", api_key="sk-test")
    try:
        items = await collect(model.stream(messages, tools))
    finally:
        await model.aclose()
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
        "stream_options": {"include_usage": True},
    }


async def test_openai_model_sends_no_tools_when_none_are_offered(
    server: ChatServer, make_model: Any
) -> None:
    server.answer(chat_stream("ok"))
    await collect(make_model().stream([Message("user", "hi")], []))
    assert "tools" not in server.received[0].body


async def test_openai_model_releases_the_response_when_the_caller_stops_early(
    server: ChatServer, make_model: Any
) -> None:
    server.answer(chat_stream("a long answer", usage=(1, 1)), chat_stream("again"))
    model = make_model()
    stream = model.stream([Message("user", "hi")], [])
    assert await anext(stream) == TextDelta("a long")
    await stream.aclose()
    # the connection went back to the pool in a usable state: the next call works
    assert (await collect(model.stream([Message("user", "hi")], [])))[-1] == Reply("again")


async def test_openai_model_reports_an_unreachable_server(open_models: list[OpenAIModel]) -> None:
    async with serve_chat() as gone:
        url = gone.base_url
    model = OpenAIModel("m", base_url=url, max_retries=0)
    open_models.append(model)
    with pytest.raises(ModelError, match=r"cannot connect to http://127\.0\.0\.1:"):
        await collect(model.stream([], []))


def test_openai_model_rejects_a_non_http_url() -> None:
    with pytest.raises(ValueError, match="http"):
        OpenAIModel("m", base_url="ftp://example.com")


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("inf")}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
    ],
)
def test_openai_model_rejects_bad_client_options(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        OpenAIModel("m", **options)


async def test_openai_model_repr_names_the_model_and_endpoint_but_never_the_key() -> None:
    model = OpenAIModel(api_key="sk-secret")
    try:
        assert repr(model) == (
            "OpenAIModel(model='gpt-4o-mini', base_url='https://api.openai.com/v1')"
        )
        assert "sk-secret" not in repr(model)
    finally:
        await model.aclose()
    assert model.client.is_closed()


# --------------------------------------------------------------------------- model_from_env


async def test_model_from_env_uses_the_official_endpoint_when_only_a_key_is_set() -> None:
    model = model_from_env(ScriptedModel([]), {"OPENAI_API_KEY": "sk-env"})
    assert isinstance(model, OpenAIModel)
    try:
        assert (model.base_url, model.model) == (OFFICIAL_BASE_URL, DEFAULT_MODEL)
        assert model.base_url == "https://api.openai.com/v1"
    finally:
        await model.aclose()


async def test_model_from_env_builds_an_openai_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.com/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_MODEL", "my-model")
    model = model_from_env(ScriptedModel([]))  # os.environ by default
    assert isinstance(model, OpenAIModel)
    try:
        assert repr(model) == (
            "OpenAIModel(model='my-model', base_url='https://api.example.com/v1')"
        )
    finally:
        await model.aclose()


async def test_model_from_env_accepts_api_base_without_a_key_and_defaults_the_model(
    server: ChatServer,
) -> None:
    model = model_from_env(environ={"OPENAI_API_BASE": server.base_url, "OPENAI_MODEL": " "})
    assert isinstance(model, OpenAIModel)
    try:
        assert (model.base_url, model.model) == (server.base_url, "gpt-4o-mini")
        server.answer(chat_stream("local"))
        assert (await collect(model.stream([Message("user", "hi")], [])))[-1] == Reply("local")
    finally:
        await model.aclose()
    assert "authorization" not in server.received[0].headers
    assert server.received[0].body["model"] == "gpt-4o-mini"


def test_model_from_env_falls_back_without_a_key_or_a_base_url() -> None:
    fallback = ScriptedModel([])
    assert model_from_env(fallback, {"OPENAI_MODEL": "gpt-x"}) is fallback
    with pytest.raises(RuntimeError, match="OPENAI_API_KEY") as excinfo:
        model_from_env(environ={})
    assert "OPENAI_BASE_URL" in str(excinfo.value)
