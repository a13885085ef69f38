"""In-process, with an OpenTelemetry SDK configured, the turn inspector draws the
turn's trace: pygents' spans and the ones the tool's own code makes (an HTTP call, a
query), registered through the SDK's public ``add_span_processor``."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NoOpTracerProvider, SpanKind

from pygents import Agent, Turn, tool
from pygents_tui import Dashboard
from pygents_tui.ui.screens import InspectorScreen

SIZE = (130, 40)


async def test_the_inspector_draws_the_turns_spans_including_the_tools_own(
    provider: TracerProvider, until: Any, text_of: Any
) -> None:
    tracer = provider.get_tracer("weather-client")

    @tool()
    async def forecast(city: str) -> str:
        url = f"https://api.example/forecast?city={city}"
        with tracer.start_as_current_span(
            "GET /forecast", kind=SpanKind.CLIENT, attributes={"url.full": url}
        ):
            pass
        with tracer.start_as_current_span(
            "SELECT cities",
            kind=SpanKind.CLIENT,
            attributes={"db.query.text": "SELECT name FROM cities"},
        ):
            pass
        return "sunny"

    # No trace_id callable: the dashboard learns each turn's trace from its span.
    app = Dashboard(tracer_provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        agent = Agent("forecaster", "forecasts", [forecast])
        await agent.put(Turn(forecast, kwargs={"city": "[b]Oslo"}))
        async for _ in agent.run():
            pass
        assert app.model is not None
        model = app.model
        await until(pilot, lambda: any(r.tool == "forecast" for r in model.store.recent))
        (record,) = [r for r in model.store.recent if r.tool == "forecast"]
        app.action_inspect(record.uuid)
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await until(pilot, lambda: "GET /forecast" in text_of(app))
        screen = text_of(app)

        assert record.trace_id is not None
        assert f"trace     {record.trace_id}" in screen
        lines = screen.splitlines()

        def indent(name: str) -> int:
            (line,) = [line for line in lines if f" {name} " in line]
            return line.index(name)

        assert indent("invoke_agent forecaster") < indent("turn forecast")
        assert indent("turn forecast") < indent("execute_tool forecast")
        assert indent("execute_tool forecast") < indent("GET /forecast")
        assert indent("GET /forecast") == indent("SELECT cities")
        assert "url.full=https://api.example/forecast?city=[b]Oslo" in screen  # plain text
        assert "db.query.text=SELECT name FROM cities" in screen
        assert "client" in screen
    capture = app.model.spans if app.model is not None else None
    assert capture is not None
    assert capture.closed  # the SDK keeps its processors: a closed one ignores spans
    with tracer.start_as_current_span("after the dashboard"):
        pass
    assert capture.drain() is False


async def test_without_an_sdk_the_inspector_says_why_there_are_no_spans(
    until: Any, text_of: Any
) -> None:
    @tool()
    async def plain() -> int:
        return 1

    app = Dashboard(tracer_provider=NoOpTracerProvider())
    async with app.run_test(size=SIZE) as pilot:
        agent = Agent("untraced", "", [plain])
        await agent.put(Turn(plain))
        async for _ in agent.run():
            pass
        assert app.model is not None
        model = app.model
        await until(pilot, lambda: len(model.store.recent) == 1)
        app.action_inspect(model.store.recent[0].uuid)
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert "no OpenTelemetry SDK is configured in this process" in text_of(app)
