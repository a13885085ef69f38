"""Fixtures for the telemetry tests: the real SDK, in-memory exporter and reader,
and an instrumentor that is always uninstrumented afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pygents import Turn, tool
from pygents_otel import PygentsInstrumentor


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def tracer_provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def metric_reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def meter_provider(metric_reader: InMemoryMetricReader) -> Iterator[MeterProvider]:
    provider = MeterProvider(metric_readers=[metric_reader])
    yield provider
    provider.shutdown()


@pytest.fixture
def instrument(
    tracer_provider: TracerProvider, meter_provider: MeterProvider
) -> Iterator[PygentsInstrumentor]:
    """Instrumented with the in-memory SDK (content capture off)."""
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    yield instrumentor
    instrumentor.uninstrument()


@pytest.fixture
def instrument_with(
    tracer_provider: TracerProvider, meter_provider: MeterProvider
) -> Iterator[Callable[..., PygentsInstrumentor]]:
    """Instrument with the in-memory SDK and extra options; always uninstrumented after."""
    instrumentor = PygentsInstrumentor()

    def instrument(**options: Any) -> PygentsInstrumentor:
        instrumentor.instrument(
            tracer_provider=tracer_provider, meter_provider=meter_provider, **options
        )
        return instrumentor

    yield instrument
    instrumentor.uninstrument()


@pytest.fixture
def spans_by_name(exporter: InMemorySpanExporter) -> Callable[[], dict[str, ReadableSpan]]:
    """A function returning the finished spans by name (names must be unique)."""

    def collect() -> dict[str, ReadableSpan]:
        spans = exporter.get_finished_spans()
        by_name = {span.name: span for span in spans}
        assert len(by_name) == len(spans), [span.name for span in spans]
        return by_name

    return collect


@pytest.fixture
def pass_through() -> Callable[[Any], Awaitable[None]]:
    """Send a value through a returning tool (``identity``) and a streaming one (``relay``,
    which yields it twice), checking that both hand back the very same object: the tests of
    captured content look at the spans of ``execute_tool identity`` and ``execute_tool relay``.
    """

    async def run(value: Any) -> None:
        @tool
        async def identity(thing: Any) -> Any:
            return thing

        @tool
        async def relay(thing: Any) -> AsyncIterator[Any]:
            yield thing
            yield thing

        assert await Turn(identity, args=[value]).returning() is value
        assert [v async for v in Turn(relay, args=[value]).yielding()] == [value, value]

    return run
