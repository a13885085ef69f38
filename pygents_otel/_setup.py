"""``configure()``: a one-call OpenTelemetry SDK for people without a distro.

Reads the standard variables the way ``opentelemetry-instrument`` does (see
``_exporters``) — ``OTEL_TRACES_EXPORTER`` and ``OTEL_METRICS_EXPORTER`` as comma lists,
the general and per-signal ``OTEL_EXPORTER_OTLP_*`` settings, ``OTEL_SERVICE_NAME``,
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
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from pygents_otel._exporters import ExporterChoice, choose
from pygents_otel._instrumentor import PygentsInstrumentor

__all__ = ["Telemetry", "configure"]

METRIC_INTERVAL_ENV = "OTEL_METRIC_EXPORT_INTERVAL"
_DEFAULT_METRIC_INTERVAL_SECONDS = 10.0


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


def _metric_reader(built: Any, interval_seconds: float | None) -> MetricReader:
    if isinstance(built, MetricReader):  # a pull exporter (Prometheus, ...) is a reader
        return built
    if interval_seconds is None and not os.environ.get(METRIC_INTERVAL_ENV, "").strip():
        interval_seconds = _DEFAULT_METRIC_INTERVAL_SECONDS
    millis = None if interval_seconds is None else interval_seconds * 1000
    return PeriodicExportingMetricReader(built, export_interval_millis=millis)


def configure(
    service_name: str | None = None,
    *,
    endpoint: str | None = None,
    protocol: str | None = None,
    traces_exporter: str | None = None,
    metrics_exporter: str | None = None,
    capture_content: bool | None = None,
    metric_interval_seconds: float | None = None,
) -> Telemetry:
    """Set up tracing and metrics from arguments or the standard ``OTEL_*`` variables.

    Arguments win over variables. ``traces_exporter`` and ``metrics_exporter`` take
    what the variables take: a comma-separated list of exporter names, or ``"none"``.
    A tracer or meter provider the application already installed is kept (and used);
    only missing ones are created. Every setting is checked before anything is
    installed, so a ``ValueError`` leaves the process as it was.
    """
    span_choices = choose("traces", traces_exporter, protocol)
    metric_choices = choose("metrics", metrics_exporter, protocol)
    name = service_name or os.environ.get("OTEL_SERVICE_NAME") or "pygents"
    resource = Resource.create({"service.name": name})
    owned: list[Any] = []

    tracer_provider: Any = trace.get_tracer_provider()
    new_tracer_provider = not isinstance(tracer_provider, TracerProvider)
    meter_provider: Any = metrics.get_meter_provider()
    new_meter_provider = not isinstance(meter_provider, MeterProvider)
    # Build every exporter first: one that fails to build leaves nothing installed.
    span_exporters = _build(span_choices, endpoint) if new_tracer_provider else []
    metric_exporters = _build(metric_choices, endpoint) if new_meter_provider else []

    if new_tracer_provider:
        tracer_provider = TracerProvider(resource=resource)
        for exporter in span_exporters:
            tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(tracer_provider)
        owned.append(tracer_provider)

    if new_meter_provider:
        readers = [_metric_reader(built, metric_interval_seconds) for built in metric_exporters]
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


def _build(choices: list[ExporterChoice], endpoint: str | None) -> list[Any]:
    return [choice.build(endpoint) for choice in choices]
