"""``configure()``: a one-call OpenTelemetry SDK for people without a distro.

Reads the standard variables — ``OTEL_SERVICE_NAME``, ``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_EXPORTER_OTLP_PROTOCOL`` (``grpc`` | ``http/protobuf``), ``OTEL_TRACES_EXPORTER``
and ``OTEL_METRICS_EXPORTER`` (``otlp`` | ``console`` | ``none``),
``OTEL_RESOURCE_ATTRIBUTES`` — builds the providers, installs them globally unless the
application already installed its own (those are kept, never replaced), and
instruments pygents.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from pygents_otel._instrumentor import PygentsInstrumentor

__all__ = ["Telemetry", "configure"]

_PROTOCOLS = ("grpc", "http/protobuf")
_EXPORTERS = ("otlp", "console", "none")


@dataclass
class Telemetry:
    """What :func:`configure` set up; call :meth:`shutdown` before exiting."""

    tracer_provider: Any
    meter_provider: Any
    instrumentor: PygentsInstrumentor
    owned: list[Any] = field(default_factory=list)

    def force_flush(self) -> None:
        for provider in self.owned:
            provider.force_flush()

    def shutdown(self) -> None:
        """Uninstrument, then flush and shut down the providers ``configure`` created."""
        self.instrumentor.uninstrument()
        for provider in self.owned:
            provider.shutdown()
        self.owned.clear()


def _choice(value: str | None, env: str, default: str, allowed: tuple[str, ...]) -> str:
    chosen = (value or os.environ.get(env) or default).strip().lower()
    if chosen not in allowed:
        raise ValueError(f"{env}={chosen!r} is not supported; use one of {', '.join(allowed)}")
    return chosen


def _span_exporter(kind: str, protocol: str, endpoint: str | None) -> SpanExporter | None:
    if kind == "console":
        return ConsoleSpanExporter()
    if kind == "none":
        return None
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(endpoint=endpoint) if endpoint else OTLPSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter as HTTPSpanExporter,
    )

    url = f"{endpoint.rstrip('/')}/v1/traces" if endpoint else None
    return HTTPSpanExporter(endpoint=url) if url else HTTPSpanExporter()


def _metric_exporter(kind: str, protocol: str, endpoint: str | None) -> MetricExporter | None:
    if kind == "console":
        return ConsoleMetricExporter()
    if kind == "none":
        return None
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter(endpoint=endpoint) if endpoint else OTLPMetricExporter()
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
        OTLPMetricExporter as HTTPMetricExporter,
    )

    url = f"{endpoint.rstrip('/')}/v1/metrics" if endpoint else None
    return HTTPMetricExporter(endpoint=url) if url else HTTPMetricExporter()


def configure(
    service_name: str | None = None,
    *,
    endpoint: str | None = None,
    protocol: str | None = None,
    traces_exporter: str | None = None,
    metrics_exporter: str | None = None,
    capture_content: bool | None = None,
    metric_interval_seconds: float = 10.0,
) -> Telemetry:
    """Set up tracing and metrics from arguments or the standard ``OTEL_*`` variables.

    Arguments win over variables. A tracer or meter provider the application already
    installed is kept (and used); only missing ones are created.
    """
    protocol = _choice(protocol, "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", _PROTOCOLS)
    traces = _choice(traces_exporter, "OTEL_TRACES_EXPORTER", "otlp", _EXPORTERS)
    metric_kind = _choice(metrics_exporter, "OTEL_METRICS_EXPORTER", "otlp", _EXPORTERS)
    name = service_name or os.environ.get("OTEL_SERVICE_NAME") or "pygents"
    resource = Resource.create({"service.name": name})
    owned: list[Any] = []

    tracer_provider: Any = trace.get_tracer_provider()
    if not isinstance(tracer_provider, TracerProvider):
        tracer_provider = TracerProvider(resource=resource)
        exporter = _span_exporter(traces, protocol, endpoint)
        if exporter is not None:
            tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(tracer_provider)
        owned.append(tracer_provider)

    meter_provider: Any = metrics.get_meter_provider()
    if not isinstance(meter_provider, MeterProvider):
        readers: list[MetricReader] = []
        metric_exporter = _metric_exporter(metric_kind, protocol, endpoint)
        if metric_exporter is not None:
            readers.append(
                PeriodicExportingMetricReader(
                    metric_exporter, export_interval_millis=metric_interval_seconds * 1000
                )
            )
        meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        metrics.set_meter_provider(meter_provider)
        owned.append(meter_provider)

    instrumentor = PygentsInstrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()  # re-instrument with these providers
    instrumentor.instrument(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
    )
    return Telemetry(tracer_provider, meter_provider, instrumentor, owned)
