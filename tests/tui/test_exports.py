"""The dashboard's two exports, pressed as keys under Pilot: ``x`` in the inspector
writes the turn's trace as OTLP JSON (read back here with protobuf's own JSON parser
into an ``ExportTraceServiceRequest``), and ``ctrl+s`` saves the screen as SVG. Each
says in a toast where it wrote, or in one line why it could not."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, StatusCode

from pygents import Agent, Turn, tool
from pygents_tui import Dashboard
from pygents_tui.ui.screens import InspectorScreen

SIZE = (130, 40)


def files(folder: Path) -> list[Path]:
    return sorted(folder.iterdir())


def toasts(app: Dashboard) -> list[str]:
    return [n.message for n in app._notifications]


def as_protobuf_json(document: dict[str, Any]) -> dict[str, Any]:
    """OTLP JSON writes ids in hex; protobuf's generic JSON mapping reads bytes as
    base64. Convert them, and only them."""
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return document


async def inspect_a_traced_turn(
    app: Dashboard, forecast: Any, pilot: Any, until: Any, text_of: Any
) -> str:
    """Run one turn whose tool makes a client span of its own, open the inspector on
    it once its spans are drawn, and return the turn's trace id."""
    agent = Agent("forecaster", "forecasts", [forecast])
    await agent.put(Turn(forecast, kwargs={"city": "Oslo"}))
    async for _ in agent.run():
        pass
    assert app.model is not None
    model = app.model
    await until(pilot, lambda: any(r.tool == "forecast" for r in model.store.recent))
    (record,) = [r for r in model.store.recent if r.tool == "forecast"]
    app.action_inspect(record.uuid)
    await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
    await until(pilot, lambda: "GET /forecast" in text_of(app))
    assert record.trace_id is not None
    return record.trace_id


@pytest.fixture
def forecast(provider: TracerProvider) -> Any:
    """A tool whose own code makes a failed client span, as an HTTP library would."""
    tracer = provider.get_tracer("weather-client")

    @tool()
    async def forecast(city: str) -> str:
        with tracer.start_as_current_span(
            "GET /forecast", kind=SpanKind.CLIENT, attributes={"url.full": f"https://x/{city}"}
        ) as span:
            span.set_status(StatusCode.ERROR, "upstream said 503")
        return "sunny"

    return forecast


async def test_x_in_the_inspector_writes_the_trace_as_otlp_json_that_protobuf_parses_back(
    provider: TracerProvider, forecast: Any, tmp_path: Path, until: Any, text_of: Any
) -> None:
    app = Dashboard(tracer_provider=provider)
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        trace_id = await inspect_a_traced_turn(app, forecast, pilot, until, text_of)
        tree = app.view.trace_tree(trace_id)
        assert tree is not None
        await pilot.press("x")
        path = tmp_path / f"trace-{trace_id}.json"
        await until(pilot, lambda: any(str(path) in t for t in toasts(app)))
    assert files(tmp_path) == [path]  # no partial file left

    document = json.loads(path.read_text())
    request = ExportTraceServiceRequest()
    json_format.ParseDict(as_protobuf_json(document), request)
    spans = [s for r in request.resource_spans for sc in r.scope_spans for s in sc.spans]
    assert len(spans) == tree.spans >= 4  # invoke_agent, turn, execute_tool, GET
    assert {s.trace_id.hex() for s in spans} == {trace_id}
    by_name = {s.name: s for s in spans}
    ids = {s.span_id.hex() for s in spans}
    # Every span's parent is in the file, but the root's.
    roots = [s for s in spans if not s.parent_span_id]
    assert [r.name for r in roots] == ["invoke_agent forecaster"]
    assert all(s.parent_span_id.hex() in ids for s in spans if s.parent_span_id)
    client = by_name["GET /forecast"]
    assert client.parent_span_id == by_name["execute_tool forecast"].span_id
    assert client.kind == SpanKind.CLIENT.value + 1  # OTLP counts from unspecified (0)
    assert client.status.code == 2
    assert client.status.message == "upstream said 503"
    assert {a.key: a.value.string_value for a in client.attributes}["url.full"] == "https://x/Oslo"
    assert 0 < client.start_time_unix_nano <= client.end_time_unix_nano
    root = roots[0]
    assert root.start_time_unix_nano <= client.start_time_unix_nano
    assert client.end_time_unix_nano <= root.end_time_unix_nano
    (resource,) = request.resource_spans
    assert resource.resource.attributes[0].key == "service.name"


async def test_x_says_in_one_line_why_the_trace_could_not_be_written(
    provider: TracerProvider, forecast: Any, tmp_path: Path, until: Any, text_of: Any
) -> None:
    app = Dashboard(tracer_provider=provider)
    app.export_dir = tmp_path / "missing"
    async with app.run_test(size=SIZE) as pilot:
        await inspect_a_traced_turn(app, forecast, pilot, until, text_of)
        await pilot.press("x")
        await until(pilot, lambda: any("trace not saved" in t for t in toasts(app)))
        (line,) = [t for t in toasts(app) if "trace not saved" in t]
        assert "\n" not in line
        assert "No such file or directory" in line
        assert isinstance(app.screen, InspectorScreen)  # still up: nothing crashed


async def test_ctrl_s_saves_the_screen_as_svg_and_a_toast_names_the_file(
    tmp_path: Path, until: Any
) -> None:
    app = Dashboard()
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any("screenshot saved to" in t for t in toasts(app)))
        (svg,) = files(tmp_path)
        assert svg.suffix == ".svg"
        assert any(str(svg) in t for t in toasts(app))
    assert svg.read_text().lstrip().startswith("<svg")
    assert "Agent" in svg.read_text()


async def test_the_inspector_says_that_x_exports_its_trace(
    provider: TracerProvider, forecast: Any, until: Any, text_of: Any
) -> None:
    """The inspector is a modal screen: the help (an app key) does not open over it,
    so its own hint line names its key."""
    app = Dashboard(tracer_provider=provider)
    async with app.run_test(size=SIZE) as pilot:
        await inspect_a_traced_turn(app, forecast, pilot, until, text_of)
        assert "x: write the trace to a file (OTLP JSON)" in text_of(app)
