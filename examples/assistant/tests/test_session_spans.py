"""Traced sessions: tool span names are the same in every session (``execute_tool bash``),
and the session is an attribute. Real SDK, in-memory exporter, the pygents instrumentor."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from assistant.agent import build_session, close_session
from assistant.model import Reply, ScriptedModel
from pygents_otel import PygentsInstrumentor

from .session_models import call


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            Reply("", (call(1, "write_file", path="a.txt", content="a"), call(2, "list_files"))),
            Reply("", (call(3, "bash", command="cat a.txt"), call(4, "stop", summary="ok"))),
        ]
    )


async def test_two_sessions_trace_the_same_tool_span_names_told_apart_by_agent(
    exporter: InMemorySpanExporter,
) -> None:
    sessions = [build_session(script()), build_session(script())]
    try:
        for session in sessions:
            [event async for event in session.run("write, list, read")]
    finally:
        for session in sessions:
            await close_session(session)

    spans = exporter.get_finished_spans()
    tool_spans = [span for span in spans if span.name.startswith("execute_tool ")]
    assert Counter(span.name for span in tool_spans) == {
        "execute_tool respond": 4,
        "execute_tool write_file": 2,
        "execute_tool list_files": 2,
        "execute_tool bash": 2,
        "execute_tool stop": 2,
    }
    assert not [span.name for span in spans if "assistant_" in span.name]
    for session in sessions:
        mine = [s for s in tool_spans if s.attributes["gen_ai.agent.name"] == session.name]
        assert len(mine) == 6
        assert {s.attributes["gen_ai.agent.id"] for s in mine} == {session.agent.uuid}
        assert {s.attributes["gen_ai.tool.name"] for s in mine} == {
            "respond",
            "write_file",
            "list_files",
            "bash",
            "stop",
        }
        turns = [s for s in spans if s.name == "turn bash"]
        assert session.name in {s.attributes["gen_ai.agent.name"] for s in turns}
    # one agent run per message: the calls are queued one at a time inside the same run
    assert sorted(s.name for s in spans if s.name.startswith("invoke_agent ")) == sorted(
        f"invoke_agent {session.name}" for session in sessions
    )


async def test_a_sessions_spans_are_one_conversation_and_its_tool_calls_keep_the_models_ids(
    exporter: InMemorySpanExporter,
) -> None:
    """A GenAI viewer groups a session by ``gen_ai.conversation.id`` and joins a tool span
    to the model's request by ``gen_ai.tool.call.id``."""
    session = build_session(script())
    try:
        [event async for event in session.run("write, list, read")]
    finally:
        await close_session(session)

    spans = exporter.get_finished_spans()
    assert spans
    assert {s.attributes.get("gen_ai.conversation.id") for s in spans} == {session.conversation_id}
    tools = {
        s.attributes["gen_ai.tool.name"]: s for s in spans if s.name.startswith("execute_tool ")
    }
    assert tools["write_file"].attributes["gen_ai.tool.call.id"] == "c1"
    assert tools["bash"].attributes["gen_ai.tool.call.id"] == "c3"
    assert "gen_ai.tool.call.id" not in tools["respond"].attributes  # no model call asked for it
