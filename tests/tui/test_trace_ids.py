"""With telemetry on, the dashboard shows each turn's trace id and viewer link."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from textual.widgets import Static

from pygents import Agent, Turn, tool
from pygents_otel import PygentsInstrumentor, trace_id_of
from pygents_tui import Dashboard
from pygents_tui.ui.screens import InspectorScreen


@pytest.fixture
def traced() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    yield exporter
    instrumentor.uninstrument()
    provider.shutdown()


async def test_the_inspector_shows_the_turns_trace_id_and_viewer_link(
    traced: InMemorySpanExporter,
) -> None:
    @tool()
    async def answer(question: str) -> str:
        return f"42 ({question})"

    url = "http://localhost:16686/trace/{trace_id}"
    app = Dashboard(trace_id=trace_id_of, trace_url=url)
    async with app.run_test(size=(100, 30)) as pilot:
        agent = Agent("oracle", "answers", [answer])
        await agent.put(Turn(answer, kwargs={"question": "life"}))
        async for _ in agent.run():
            pass
        app.refresh_view()
        turn_spans = [s for s in traced.get_finished_spans() if s.name == "turn answer"]
        assert len(turn_spans) == 1
        expected = format(turn_spans[0].context.trace_id, "032x")

        (record,) = [r for r in app.model.store.recent if r.tool == "answer"]
        assert record.trace_id == expected

        await pilot.press("6")  # the timeline
        await pilot.pause()
        app.action_inspect(record.uuid)
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        body = str(app.screen.query_one("#inspector-body", Static).render())
        assert expected in body
        assert url.format(trace_id=expected) in body


async def test_without_telemetry_there_is_no_trace_id() -> None:
    @tool()
    async def plain() -> int:
        return 1

    app = Dashboard(trace_id=trace_id_of)  # telemetry not instrumented
    async with app.run_test(size=(100, 30)):
        agent = Agent("plain-agent", "", [plain])
        await agent.put(Turn(plain))
        async for _ in agent.run():
            pass
        app.refresh_view()
        (record,) = [r for r in app.model.store.recent if r.tool == "plain"]
        assert record.trace_id is None
