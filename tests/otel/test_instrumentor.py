"""Turning telemetry on (SPEC §2.1) and keeping it harmless.

The instrumentor's entry point and dependencies, idempotence, the dormant mode without
an SDK, ``configure()`` and the rule that telemetry never breaks the application.

Scenarios that need a fresh interpreter (``configure()``, the dormant mode) run in a
child process through ``child.run_python``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from importlib.metadata import entry_points
from typing import Any

import pytest
from child import CONFIGURE_AND_WORK, report_of, run_python
from opentelemetry.instrumentation.dependencies import get_dependency_conflicts
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import pygents_otel
from pygents import Agent, ContextItem, Turn, tool
from pygents._identity import IDENTITY, Identity
from pygents_otel import PygentsInstrumentor

# -- the instrumentor ---------------------------------------------------------------------


def test_the_entry_point_loads_the_instrumentor() -> None:
    found = [ep for ep in entry_points(group="opentelemetry_instrumentor") if ep.name == "pygents"]
    assert len(found) == 1
    assert found[0].load() is PygentsInstrumentor
    assert issubclass(PygentsInstrumentor, BaseInstrumentor)


def test_instrumentation_dependencies_name_pygents_and_are_satisfied() -> None:
    dependencies = list(PygentsInstrumentor().instrumentation_dependencies())
    assert dependencies
    assert all(isinstance(d, str) for d in dependencies)
    assert any(d.replace(" ", "").startswith("pygents") for d in dependencies)
    assert get_dependency_conflicts(dependencies) is None


def test_instrumenting_says_who_the_process_is_and_uninstrumenting_takes_it_back(
    meter_provider: MeterProvider,
) -> None:
    # What a Redis worker writes beside its heartbeat (pygents._identity): the
    # resource's service and instance, never a resource that lacks one of them.
    named = Resource.create({"service.name": "desk-svc", "service.instance.id": "i-7"})
    for resource, said in (
        (named, Identity("desk-svc", "i-7")),
        (Resource({"service.name": "desk-svc"}), None),
    ):
        provider = TracerProvider(resource=resource)
        instrumentor = PygentsInstrumentor()
        instrumentor.instrument(tracer_provider=provider, meter_provider=meter_provider)
        try:
            assert IDENTITY.current == said
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
        assert IDENTITY.current is None


async def test_instrumenting_twice_is_harmless(
    instrument: PygentsInstrumentor,
    tracer_provider: TracerProvider,
    meter_provider: MeterProvider,
    exporter: InMemorySpanExporter,
) -> None:
    subscriber = instrument.subscriber
    assert subscriber is not None
    PygentsInstrumentor().instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    assert instrument.subscriber is subscriber

    @tool
    async def once() -> int:
        return 1

    assert await Turn(once).returning() == 1
    assert sorted(s.name for s in exporter.get_finished_spans()) == [
        "execute_tool once",
        "turn once",
    ]


async def test_uninstrumenting_twice_is_harmless_and_instrument_works_again(
    instrument: PygentsInstrumentor,
    tracer_provider: TracerProvider,
    meter_provider: MeterProvider,
    exporter: InMemorySpanExporter,
) -> None:
    instrument.uninstrument()
    instrument.uninstrument()
    assert instrument.subscriber is None
    instrument.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)

    @tool
    async def again() -> int:
        return 2

    assert await Turn(again).returning() == 2
    assert len(exporter.get_finished_spans()) == 2


@pytest.mark.usefixtures("instrument")
async def test_tracer_and_meter_carry_the_instrumentation_scope(
    exporter: InMemorySpanExporter, metric_reader: InMemoryMetricReader
) -> None:
    @tool
    async def scoped() -> int:
        return 3

    await Turn(scoped).returning()

    for span in exporter.get_finished_spans():
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name.startswith("pygents_otel")
        assert span.instrumentation_scope.version == pygents_otel.__version__
        assert (span.instrumentation_scope.schema_url or "").startswith(
            "https://opentelemetry.io/schemas/"
        )
    data = metric_reader.get_metrics_data()
    assert data is not None
    scopes = {sm.scope.name for rm in data.resource_metrics for sm in rm.scope_metrics}
    assert len(scopes) == 1
    assert scopes.pop().startswith("pygents_otel")


# -- without an SDK, and with a global one ------------------------------------------------


def test_without_an_sdk_the_instrumentor_is_dormant_and_the_app_runs() -> None:
    done = run_python(
        """
        from pygents_otel import PygentsInstrumentor
        instrumentor = PygentsInstrumentor()
        instrumentor.instrument()
        report(dormant=instrumentor.subscriber is None, result=work())
        """
    )
    assert report_of(done) == {"dormant": True, "result": ["hello ada"]}


def test_without_explicit_providers_the_global_sdk_is_used() -> None:
    """What ``opentelemetry-instrument`` does: the SDK first, then ``instrument()``."""
    done = run_python(
        """
        from pygents_otel import PygentsInstrumentor

        exporter, _ = install_tracing_to_memory()
        PygentsInstrumentor().instrument()
        result = work()
        report(result=result, spans=sorted(s.name for s in exporter.get_finished_spans()))
        """
    )
    assert report_of(done) == {
        "result": ["hello ada"],
        "spans": ["execute_tool greet", "invoke_agent greeter", "turn greet"],
    }


# -- configure() --------------------------------------------------------------------------


def test_configure_with_the_console_exporter_prints_the_spans() -> None:
    done = run_python(
        CONFIGURE_AND_WORK,
        OTEL_TRACES_EXPORTER="console",
        OTEL_METRICS_EXPORTER="none",
        OTEL_SERVICE_NAME="console-demo",
    )
    assert report_of(done) == {"result": ["hello ada"]}
    assert '"name": "turn greet"' in done.stdout
    assert '"name": "execute_tool greet"' in done.stdout
    assert '"name": "invoke_agent greeter"' in done.stdout
    assert '"service.name": "console-demo"' in done.stdout


def test_configure_keeps_the_providers_the_application_installed() -> None:
    done = run_python(
        """
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from pygents_otel import configure

        exporter, provider = install_tracing_to_memory()
        reader = InMemoryMetricReader()
        meter_provider = MeterProvider(metric_readers=[reader])
        metrics.set_meter_provider(meter_provider)

        telemetry = configure(service_name="ignored")
        result = work()
        seen = dict(
            result=result,
            same_tracer_provider=telemetry.tracer_provider is provider,
            same_meter_provider=telemetry.meter_provider is meter_provider,
            global_tracer_provider_kept=trace.get_tracer_provider() is provider,
            global_meter_provider_kept=metrics.get_meter_provider() is meter_provider,
            spans=sorted(s.name for s in exporter.get_finished_spans()),
            metrics=sorted(
                m.name
                for rm in reader.get_metrics_data().resource_metrics
                for sm in rm.scope_metrics
                for m in sm.metrics
            ),
        )
        telemetry.shutdown()
        with provider.get_tracer("app").start_as_current_span("after shutdown"):
            pass
        seen["app_provider_still_works"] = "after shutdown" in [
            s.name for s in exporter.get_finished_spans()
        ]
        report(**seen)
        """,
        OTEL_TRACES_EXPORTER="console",
        OTEL_METRICS_EXPORTER="console",
    )
    seen = report_of(done)
    assert seen["result"] == ["hello ada"]
    assert seen["same_tracer_provider"] is True
    assert seen["same_meter_provider"] is True
    assert seen["global_tracer_provider_kept"] is True
    assert seen["global_meter_provider_kept"] is True
    assert seen["spans"] == ["execute_tool greet", "invoke_agent greeter", "turn greet"]
    assert "gen_ai.execute_tool.duration" in seen["metrics"]
    assert seen["app_provider_still_works"] is True
    assert '"name": "turn greet"' not in done.stdout  # no console exporter was added


def test_configure_rejects_an_unknown_otlp_protocol_naming_the_variable() -> None:
    done = run_python(
        """
        from opentelemetry import trace
        from pygents_otel import configure
        try:
            configure(service_name="bad")
        except ValueError as exc:
            error = str(exc)
        else:
            error = None
        report(error=error, provider=type(trace.get_tracer_provider()).__name__)
        """,
        OTEL_EXPORTER_OTLP_PROTOCOL="carrier-pigeon",
    )
    seen = report_of(done)
    assert seen["error"] is not None
    assert "OTEL_EXPORTER_OTLP_PROTOCOL" in seen["error"]
    assert "carrier-pigeon" in seen["error"]
    assert seen["provider"] == "ProxyTracerProvider"  # nothing half-installed


# -- telemetry never breaks the application -----------------------------------------------


class FailingExporter(SpanExporter):
    """An exporter whose collector is on fire."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        raise RuntimeError("collector exploded")

    def shutdown(self) -> None:
        pass


class FailingProcessor(SpanProcessor):
    """A span processor that raises when spans start or end."""

    def __init__(self, where: str) -> None:
        self.where = where

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.where == "on_start":
            raise RuntimeError("processor exploded at start")

    def on_end(self, span: ReadableSpan) -> None:
        if self.where == "on_end":
            raise RuntimeError("processor exploded at end")


def failing_provider(where: str) -> TracerProvider:
    provider = TracerProvider()
    if where == "export":
        provider.add_span_processor(SimpleSpanProcessor(FailingExporter()))
    else:
        provider.add_span_processor(FailingProcessor(where))
    return provider


@pytest.mark.parametrize("where", ["export", "on_start", "on_end"])
async def test_a_failing_telemetry_pipeline_does_not_affect_the_agent(
    where: str, meter_provider: MeterProvider, caplog: pytest.LogCaptureFixture
) -> None:
    provider = failing_provider(where)
    instrumentor = PygentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider, meter_provider=meter_provider)
    try:
        hook_calls: list[str] = []

        @tool
        async def double(n: int) -> int:
            return n * 2

        @tool
        async def stream(n: int) -> AsyncIterator[Any]:
            for i in range(n):
                yield i
            yield ContextItem("a note")

        @tool
        async def fails() -> None:
            raise KeyError("the tool's own error")

        @double.after_invoke
        async def seen(result: int) -> None:
            hook_calls.append(f"after {result}")

        agent = Agent("resilient", "Keeps going", [double, stream, fails])
        turns = [Turn(double, args=[n]) for n in range(3)] + [Turn(stream, args=[4])]
        for turn in turns:
            await agent.put(turn)
        with caplog.at_level(logging.ERROR):
            values = [value async for _, value in agent.run()]
            await agent.put(Turn(fails))
            with pytest.raises(KeyError, match="the tool's own error"):
                [value async for _, value in agent.run()]
    finally:
        instrumentor.uninstrument()
        provider.shutdown()

    assert values == [0, 2, 4, 0, 1, 2, 3]
    assert hook_calls == ["after 0", "after 2", "after 4"]
    assert [t.stop_reason for t in turns] == ["completed"] * 4
    assert len(agent.context_queue) == 1
    assert not agent.is_running
    contained = [r for r in caplog.records if r.name == "pygents" and where in r.getMessage()]
    if where == "export":
        assert contained == []  # the SDK's own processor contains exporter failures
    else:
        assert len(contained) == 1  # contained, and logged once per subscriber and method
