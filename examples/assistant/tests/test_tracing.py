"""Model calls in the assistant's traces: the OpenAI instrumentation's ``chat`` spans,
with their token usage, nest under the ``execute_tool respond`` span of the turn that
made the call (the real SDK, the in-memory exporter, the local chat server)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from assistant.agent import build_session, close_session
from assistant.model import Message, TextDelta
from assistant.openai_model import OpenAIModel
from assistant.tracing import tracing_requested
from pygents_otel import PygentsInstrumentor

from .chat_server import ChatServer, chat_stream, serve_chat

# The checkout's root: the command runs from anywhere, as the guide shows it from there.
CHECKOUT = Path(__file__).resolve().parents[3]


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


async def test_under_content_capture_each_runs_input_is_the_users_message_that_started_it(
    server: ChatServer, exporter: InMemorySpanExporter
) -> None:
    """What a GenAI viewer (Phoenix) lists as a session's first input is the run's
    ``input.value``: the user's message, not the first ``respond`` call's arguments."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider, capture_content=True)
    server.answer(
        chat_stream("Looking.", tool_calls=[("c1", "list_files", {})]),
        chat_stream("The folder is empty."),
        chat_stream("Done, then."),
    )
    model = OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test", max_retries=0)
    session = build_session(model, name="captured-assistant")
    messages = ["what is in this folder?", "then we are done"]
    try:
        for message in messages:
            [event async for event in session.run(message)]
    finally:
        await close_session(session)
        await model.aclose()
        instrumentor.uninstrument()
        provider.shutdown()

    spans = exporter.get_finished_spans()
    runs = sorted(
        (s for s in spans if s.name == "invoke_agent captured-assistant"),
        key=lambda s: s.start_time or 0,
    )
    assert [run.attributes["input.value"] for run in runs] == messages
    assert {run.attributes["input.mime_type"] for run in runs} == {"text/plain"}
    # the output: the last value the run routed, the model's final reply
    assert [json.loads(run.attributes["output.value"])["text"] for run in runs] == [
        "The folder is empty.",
        "Done, then.",
    ]
    # a tool span's input is still its own call's arguments
    [listing] = [s for s in spans if s.name == "execute_tool list_files"]
    assert json.loads(listing.attributes["input.value"]) == {}


# --------------------------------------------------------------------------- the switch


@pytest.mark.parametrize(
    ("environ", "on"),
    [
        ({}, False),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": " otlp , console "}, True),
        ({"OTEL_TRACES_EXPORTER": "NONE"}, False),
        ({"OTEL_TRACES_EXPORTER": ""}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, False),
        ({"OTEL_SERVICE_NAME": "svc", "OTEL_METRICS_EXPORTER": "console"}, False),
    ],
)
def test_tracing_is_on_for_a_traces_exporter_or_an_otlp_endpoint(
    environ: dict[str, str], on: bool
) -> None:
    assert tracing_requested(environ) is on


def console_spans(out: str) -> list[dict[str, Any]]:
    """The spans the console exporter printed: one indented JSON object each."""
    decoder = json.JSONDecoder()
    return [decoder.raw_decode(out, m.start())[0] for m in re.finditer(r"^\{$", out, re.M)]


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    return subprocess.run(
        [sys.executable, "-m", "assistant", *args],
        cwd=CHECKOUT,
        env={**clean, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_console_exporter_prints_the_agent_turn_and_tool_spans() -> None:
    result = run_cli(
        "--plain", "--scripted", "--once", "write two notes", OTEL_TRACES_EXPORTER="console"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.splitlines()[0].endswith("; traces to console")
    assert "summary: notes written, words counted" in result.stdout
    spans = console_spans(result.stdout)
    by_id = {span["context"]["span_id"]: span for span in spans}
    [agent] = [s for s in spans if s["name"] == "invoke_agent assistant"]
    assert agent["parent_id"] is None
    assert agent["resource"]["attributes"]["service.name"] == "pygents-assistant"
    tools = [s for s in spans if s["name"].startswith("execute_tool ")]
    written = [s for s in tools if s["name"].endswith("write_file")]
    assert len(written) == 2
    for tool in written:
        turn = by_id[tool["parent_id"]]
        assert turn["name"].startswith("turn ")
        assert by_id[turn["parent_id"]] is agent
    assert any(is_respond(s["name"]) for s in tools)
    # the helpers are agents of their own, in the same trace
    helpers = [s for s in spans if s["name"].startswith("invoke_agent assistant.t")]
    assert len(helpers) == 2
    assert {s["context"]["trace_id"] for s in spans} == {agent["context"]["trace_id"]}


def test_no_spans_are_printed_when_tracing_is_off() -> None:
    result = run_cli("--plain", "--scripted", "--once", "go", OTEL_TRACES_EXPORTER="none")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "traces to" not in result.stderr
    assert console_spans(result.stdout) == []
