"""``configure()``: a one-call OpenTelemetry SDK for people without a distro.

Reads the standard variables the way ``opentelemetry-instrument`` does (see
``_exporters``) — ``OTEL_TRACES_EXPORTER`` and ``OTEL_METRICS_EXPORTER`` (and, in live
mode, ``OTEL_LOGS_EXPORTER``) as comma lists,
the general and per-signal ``OTEL_EXPORTER_OTLP_*`` settings, ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES`` — builds the providers, installs them globally unless the
application already installed its own (those are kept, never replaced), and
instruments pygents.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.environment_variables import OTEL_BLRP_SCHEDULE_DELAY
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from pygents_otel import _names as n
from pygents_otel._exporters import ExporterChoice, choose, fallback
from pygents_otel._instrumentor import PygentsInstrumentor, Settings
from pygents_otel._tally import EndedSpans, SpanCounts, SpanTally, TallyingExporter
from pygents_otel._text import bounded

__all__ = ["Telemetry", "configure"]

METRIC_INTERVAL_ENV = "OTEL_METRIC_EXPORT_INTERVAL"
SHUTDOWN_TIMEOUT_ENV = "PYGENTS_OTEL_SHUTDOWN_TIMEOUT"
DEFAULT_SHUTDOWN_TIMEOUT = 5.0
_DEFAULT_METRIC_INTERVAL_SECONDS = 10.0
# How long live records wait to be batched: short, so a running turn shows within a
# second and a half at the listener (the SDK's own default is a second).
LIVE_SCHEDULE_DELAY_MILLIS = 200
PROCESS_STARTED = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
"""When this process started, as near as Python can tell without reading ``/proc``:
when pygents_otel was first imported. Fixed for the process's life, so every
provider of one process, configured once or twice, reports the same run."""
# After the exporters were stopped, how long the shutdown thread gets to wind down.
_GRACE_SECONDS = 1.0

_log = logging.getLogger("pygents_otel")


@dataclass(eq=False)
class Telemetry:
    """What [`configure`][pygents_otel.configure] set up; call `shutdown` before exiting.

    ``shutdown_timeout`` is the most `shutdown` waits for the last exports, in
    seconds. ``exporters`` are the exporters ``configure`` built: the ones shutdown
    stops when that time is up. ``tally`` counts their spans (`span_counts`).
    ``logger_provider`` carries live mode's records (``None`` when it is off).
    """

    tracer_provider: Any
    meter_provider: Any
    instrumentor: PygentsInstrumentor
    owned: list[Any] = field(default_factory=list)
    exporters: list[Any] = field(default_factory=list)
    shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT
    tally: SpanTally = field(default_factory=SpanTally)
    logger_provider: Any = None

    def span_counts(self) -> dict[str, SpanCounts]:
        """For each span exporter ``configure`` built (by name): the spans that ended,
        were exported, failed to export, and were dropped because the export queue
        was full. Empty when the application's own tracer provider was kept."""
        return self.tally.counts()

    def force_flush(self, timeout: float | None = None) -> bool:
        """Ask the providers ``configure`` created to export what they hold, allowing
        ``timeout`` seconds (default: ``shutdown_timeout``) in all. ``False`` if a
        provider reported that it did not finish."""
        seconds = self.shutdown_timeout if timeout is None else _seconds("timeout", timeout)
        deadline = time.monotonic() + seconds
        flushed = True
        for provider in self.owned:
            left = max(0.0, deadline - time.monotonic())
            flushed = bool(provider.force_flush(timeout_millis=int(left * 1000))) and flushed
        return flushed

    def shutdown(self, timeout: float | None = None) -> bool:
        """Uninstrument, then flush and shut down the providers ``configure`` created,
        waiting at most ``timeout`` seconds (default: ``shutdown_timeout``).

        With the collector down, the SDK's exporters keep retrying each batch and
        its shutdown waits for them (tens of seconds). Here, once the time is up the
        exporters are shut down, which ends their retries; what was not exported is
        dropped, a warning says so, and ``False`` is returned. Calling it again does
        nothing. It also runs at interpreter exit if the application did not call it.
        """
        seconds = self.shutdown_timeout if timeout is None else _seconds("timeout", timeout)
        atexit.unregister(self.shutdown)
        self.instrumentor.uninstrument()
        owned, self.owned = self.owned, []
        if not owned:
            return True
        worker = _daemon(_shut_down, owned, time.monotonic() + seconds)
        worker.join(seconds)
        finished = not worker.is_alive()
        if not finished:
            # Stopping the exporters ends their retries and waits on the network. Some
            # SDK versions make exporter.shutdown() itself wait for the export in
            # flight, so it runs on its own daemon thread too, and both get a moment.
            stopper = _daemon(_stop, self.exporters)
            grace = time.monotonic() + _GRACE_SECONDS
            stopper.join(_GRACE_SECONDS)
            worker.join(max(0.0, grace - time.monotonic()))
            _log.warning(
                "telemetry was not exported within %.3g s (is the collector down or "
                "slow?); the rest was dropped. To wait longer, pass shutdown_timeout= to "
                "configure() or set %s",
                seconds,
                SHUTDOWN_TIMEOUT_ENV,
            )
        _report(self.span_counts(), finished)
        return finished


def _report(counts: dict[str, SpanCounts], finished: bool) -> None:
    """One warning per exporter that lost spans, with the exact numbers."""
    why = (
        "because the export queue was full (raise OTEL_BSP_MAX_QUEUE_SIZE)"
        if finished
        else "because the export queue was full or shutdown ran out of time"
    )
    for name, count in counts.items():
        if count.dropped or count.failed:
            _log.warning(
                "%s exporter: %d of %d spans were not exported: %d dropped %s, %d failed to send",
                name,
                count.dropped + count.failed,
                count.ended,
                count.dropped,
                why,
                count.failed,
            )


def _daemon(target: Any, *args: Any) -> threading.Thread:
    """A started daemon thread: one the interpreter does not wait for at exit."""
    thread = threading.Thread(target=target, args=args, name="pygents-otel-shutdown")
    thread.daemon = True
    thread.start()
    return thread


def _stop(exporters: list[Any]) -> None:
    for exporter in exporters:
        _quietly(exporter.shutdown)


def _shut_down(providers: list[Any], deadline: float) -> None:
    """Shut the providers down (on the shutdown thread, which ``shutdown`` waits for)."""
    for provider in providers:
        if isinstance(provider, MeterProvider):
            left = max(0.0, deadline - time.monotonic())
            _quietly(provider.shutdown, timeout_millis=left * 1000)
        else:
            _quietly(provider.shutdown)


def _quietly(call: Any, **kwargs: Any) -> None:
    """``call(**kwargs)``; an error is logged in one line and the shutdown goes on (the
    SDK raises, for instance, when a meter provider had no time left)."""
    try:
        call(**kwargs)
    except Exception as error:
        owner = type(getattr(call, "__self__", call)).__name__
        _log.warning(
            "%s did not shut down cleanly: %s", owner, bounded(" ".join(str(error).split()))
        )


def _seconds(name: str, value: object) -> float:
    """A duration argument, checked: a finite number of seconds, 0 or more."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, got {bounded(repr(value))}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


def _shutdown_timeout(value: float | None) -> float:
    if value is not None:
        return _seconds("shutdown_timeout", value)
    raw = os.environ.get(SHUTDOWN_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_SHUTDOWN_TIMEOUT
    try:
        return _seconds(SHUTDOWN_TIMEOUT_ENV, float(raw))
    except ValueError:
        raise ValueError(
            f"{SHUTDOWN_TIMEOUT_ENV}={bounded(raw)!r} is not a number of seconds >= 0; "
            "set it to e.g. 5, or unset it for the default"
        ) from None


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
    capture_exception_message: bool | None = None,
    metric_interval_seconds: float | None = None,
    shutdown_timeout: float | None = None,
    live: bool | None = None,
    logs_exporter: str | None = None,
    snapshot_interval: float | None = None,
) -> Telemetry:
    """Set up tracing and metrics from arguments or the standard ``OTEL_*`` variables.

    Arguments win over variables. ``traces_exporter`` and ``metrics_exporter`` take
    what the variables take: a comma-separated list of exporter names, or ``"none"``.
    Left unset, they mean OTLP; but metrics and logs mean none when the traces go
    elsewhere and no OTLP endpoint is set (``_exporters.fallback``).
    A tracer or meter provider the application already installed is kept (and used);
    only missing ones are created. Every setting is checked before anything is
    installed, so a ``ValueError`` leaves the process as it was.

    ``shutdown_timeout`` (or ``PYGENTS_OTEL_SHUTDOWN_TIMEOUT``; 5 s by default) bounds
    how long [`Telemetry.shutdown`][pygents_otel.Telemetry.shutdown] waits for the
    last exports, so that a
    collector that is down cannot hold up the program's exit.

    ``live`` (or ``OTEL_INSTRUMENTATION_PYGENTS_LIVE=true``) turns live mode on: a
    logger provider is created too (unless the application installed one), exporting
    with ``logs_exporter`` (or ``OTEL_LOGS_EXPORTER``; OTLP by default) in batches
    every 200 ms (``OTEL_BLRP_SCHEDULE_DELAY`` overrides), so that ``pygents-tui
    listen`` shows a turn within a second and a half of its start.

    Every provider created shares one resource: the service name, and
    ``service.instance.id`` (a random id per process unless ``OTEL_RESOURCE_ATTRIBUTES``
    sets one), ``host.name`` and ``process.pid``, which tell apart the processes of a
    service.

    ``capture_content``, ``capture_exception_message``, ``live`` and
    ``snapshot_interval`` go to `PygentsInstrumentor.instrument`.
    """
    seconds = _shutdown_timeout(shutdown_timeout)
    instrumenting = {
        "capture_content": capture_content,
        "capture_exception_message": capture_exception_message,
        "live": live,
        "snapshot_interval": snapshot_interval,
    }
    # Checks the instrumentor's variables before installing anything.
    live_on = Settings.of(instrumenting).live
    span_choices = choose("traces", traces_exporter, protocol)
    metric_default = fallback("metrics", span_choices, endpoint)
    metric_choices = choose("metrics", metrics_exporter, protocol, metric_default)
    log_default = fallback("logs", span_choices, endpoint)
    log_choices = choose("logs", logs_exporter, protocol, log_default) if live_on else []
    name = service_name or os.environ.get("OTEL_SERVICE_NAME") or "pygents"
    resource = _resource(name)
    owned: list[Any] = []

    tracer_provider: Any = trace.get_tracer_provider()
    new_tracer_provider = not isinstance(tracer_provider, TracerProvider)
    meter_provider: Any = metrics.get_meter_provider()
    new_meter_provider = not isinstance(meter_provider, MeterProvider)
    logger_provider: Any = _logs.get_logger_provider() if live_on else None
    new_logger_provider = live_on and not isinstance(logger_provider, LoggerProvider)
    # Build every exporter first: one that fails to build leaves nothing installed.
    span_exporters = _build(span_choices, endpoint) if new_tracer_provider else []
    metric_exporters = _build(metric_choices, endpoint) if new_meter_provider else []
    log_exporters = _build(log_choices, endpoint) if new_logger_provider else []

    tally = SpanTally()
    if new_tracer_provider:
        # Shut down by Telemetry.shutdown (bounded), at exit too: not by the SDK's own
        # exit handler, which waits for every retry.
        tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        if span_exporters:
            tracer_provider.add_span_processor(EndedSpans(tally))
        # The batch processors read the OTEL_BSP_* variables themselves.
        for name, exporter in _named(span_choices, span_exporters):
            tracer_provider.add_span_processor(
                BatchSpanProcessor(TallyingExporter(exporter, name, tally))
            )
        trace.set_tracer_provider(tracer_provider)
        owned.append(tracer_provider)

    if new_meter_provider:
        readers = [_metric_reader(built, metric_interval_seconds) for built in metric_exporters]
        meter_provider = MeterProvider(
            resource=resource, metric_readers=readers, shutdown_on_exit=False
        )
        metrics.set_meter_provider(meter_provider)
        owned.append(meter_provider)

    if new_logger_provider:
        logger_provider = _logger_provider(resource, log_exporters)
        _logs.set_logger_provider(logger_provider)
        owned.append(logger_provider)

    instrumentor = PygentsInstrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()  # re-instrument with these providers
    instrumentor.instrument(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=logger_provider,
        **instrumenting,
    )
    built = span_exporters + metric_exporters + log_exporters
    exporters = [exporter for exporter in built if not isinstance(exporter, MetricReader)]
    telemetry = Telemetry(
        tracer_provider,
        meter_provider,
        instrumentor,
        owned,
        exporters,
        seconds,
        tally,
        logger_provider,
    )
    if owned:
        atexit.register(telemetry.shutdown)
    return telemetry


def _resource(service_name: str) -> Resource:
    """The service, and what tells its processes apart: ``service.instance.id`` (random
    per process), ``host.name``, ``process.pid`` and ``process.creation.time``, each
    unless the variables set it. The creation time tells a restarted process from the
    one it replaces when a deployment keeps the instance id across restarts and the
    pid repeats (a container's first process is always pid 1)."""
    detected = Resource.create({n.SERVICE_NAME: service_name})
    missing = {
        key: value
        for key, value in (
            (n.SERVICE_INSTANCE, str(uuid.uuid4())),
            (n.HOST_NAME, socket.gethostname()),
            (n.PROCESS_PID, os.getpid()),
            (n.PROCESS_CREATION_TIME, PROCESS_STARTED),
        )
        if key not in detected.attributes
    }
    return detected.merge(Resource(missing))


def _logger_provider(resource: Resource, exporters: list[Any]) -> LoggerProvider:
    """A logger provider for live records, batching every 200 ms unless
    ``OTEL_BLRP_SCHEDULE_DELAY`` says otherwise (the processor reads it itself)."""
    provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    chosen = os.environ.get(OTEL_BLRP_SCHEDULE_DELAY, "").strip()
    delay = None if chosen else LIVE_SCHEDULE_DELAY_MILLIS
    for exporter in exporters:
        provider.add_log_record_processor(
            BatchLogRecordProcessor(exporter, schedule_delay_millis=delay)
        )
    return provider


def _build(choices: list[ExporterChoice], endpoint: str | None) -> list[Any]:
    return [choice.build(endpoint) for choice in choices]


def _named(choices: list[ExporterChoice], built: list[Any]) -> list[tuple[str, Any]]:
    """Each exporter with a name to count it under (``console#2`` for a second one)."""
    named: list[tuple[str, Any]] = []
    for choice, exporter in zip(choices, built, strict=True):
        taken = sum(1 for name, _ in named if name.split("#")[0] == choice.name)
        named.append((f"{choice.name}#{taken + 1}" if taken else choice.name, exporter))
    return named
