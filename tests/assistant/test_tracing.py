"""Model calls in the assistant's traces: the OpenAI instrumentation's ``chat`` spans,
with their token usage, nest under the ``execute_tool respond`` span of the turn that
made the call (the real SDK, the in-memory exporter, the local chat server)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from examples.assistant.agent import build_session, close_session
from examples.assistant.model import Message, OpenAIModel, TextDelta
from pygents_otel import PygentsInstrumentor

from .chat_server import ChatServer, chat_stream, serve_chat


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def traced(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    """pygents and the openai client instrumented on one provider; both undone after."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    pygents = PygentsInstrumentor()
    pygents.instrument(tracer_provider=provider)
    client = OpenAIInstrumentor()
    client.instrument(tracer_provider=provider)
    yield provider
    client.uninstrument()
    pygents.uninstrument()
    provider.shutdown()


@pytest.fixture
async def server() -> AsyncIterator[ChatServer]:
    async with serve_chat() as running:
        yield running


def parent_of(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan:
    assert span.parent is not None, f"{span.name} has no parent"
    [found] = [s for s in spans if s.context.span_id == span.parent.span_id]
    return found


def chain(span: ReadableSpan, spans: list[ReadableSpan]) -> list[str]:
    """The names of ``span`` and its ancestors, root first."""
    names = [span.name]
    while span.parent is not None:
        span = parent_of(span, spans)
        names.append(span.name)
    return names[::-1]


def is_respond(name: str) -> bool:
    """``execute_tool respond`` (per-session prefixes, if any, aside)."""
    return name.startswith("execute_tool ") and name.rpartition(".")[2].endswith("respond")


async def run_session(server: ChatServer, task: str) -> str:
    model = OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test", max_retries=0)
    session = build_session(model, name="traced-assistant")
    try:
        async for _ in session.run(task):
            pass
    finally:
        await close_session(session)
        await model.aclose()
    return session.summary or ""


@pytest.mark.usefixtures("traced")
async def test_a_model_call_is_a_chat_span_with_tokens_under_the_respond_tool_span(
    server: ChatServer, exporter: InMemorySpanExporter
) -> None:
    server.answer(chat_stream("all done", usage=(11, 3)))
    assert await run_session(server, "say you are done") == "all done"

    spans = list(exporter.get_finished_spans())
    [chat] = [s for s in spans if s.name == "chat gpt-test"]
    agent, turn, tool, call = chain(chat, spans)
    assert agent == "invoke_agent traced-assistant"
    assert turn.startswith("turn ")
    assert turn.endswith("respond")
    assert is_respond(tool)
    assert call == "chat gpt-test"
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.usage.input_tokens"] == 11
    assert chat.attributes["gen_ai.usage.output_tokens"] == 3
    assert chat.attributes["gen_ai.request.model"] == "gpt-test"
    assert chat.end_time is not None


@pytest.mark.usefixtures("traced")
async def test_each_model_call_nests_under_the_respond_turn_that_made_it(
    server: ChatServer, exporter: InMemorySpanExporter
) -> None:
    server.answer(
        chat_stream("Looking.", tool_calls=[("c1", "list_files", {})], usage=(20, 5)),
        chat_stream("nothing here", usage=(31, 4)),
    )
    assert await run_session(server, "what is here?") == "nothing here"

    spans = list(exporter.get_finished_spans())
    chats = sorted((s for s in spans if s.name == "chat gpt-test"), key=lambda s: s.start_time or 0)
    assert len(chats) == 2
    tools = [parent_of(chat, spans) for chat in chats]
    assert all(is_respond(tool.name) for tool in tools)
    assert tools[0].context.span_id != tools[1].context.span_id  # one respond turn each
    turns = [parent_of(tool, spans) for tool in tools]
    agents = {parent_of(turn, spans).name for turn in turns}
    assert agents == {"invoke_agent traced-assistant"}
    usage = [
        (
            chat.attributes["gen_ai.usage.input_tokens"],
            chat.attributes["gen_ai.usage.output_tokens"],
        )
        for chat in chats
        if chat.attributes is not None
    ]
    assert usage == [(20, 5), (31, 4)]
    # the tool the model asked for ran in between, as its own turn of the same agent
    [listing] = [s for s in spans if s.name.startswith("turn ") and s.name.endswith("list_files")]
    assert parent_of(listing, spans).name == "invoke_agent traced-assistant"


@pytest.mark.usefixtures("traced")
async def test_a_model_call_abandoned_midway_still_ends_its_chat_span(
    server: ChatServer, exporter: InMemorySpanExporter
) -> None:
    server.answer(chat_stream("a long answer", usage=(9, 9)))
    model = OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test", max_retries=0)
    try:
        stream = model.stream([Message("user", "hi")], [])
        assert await anext(stream) == TextDelta("a long")
        await stream.aclose()  # the caller went away (a timeout, a cancelled turn)
    finally:
        await model.aclose()
    [chat] = exporter.get_finished_spans()
    assert chat.name == "chat gpt-test"
    assert chat.end_time is not None
