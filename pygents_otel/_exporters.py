"""Which exporters [`configure`][pygents_otel.configure] builds, read from the
standard variables the way ``opentelemetry-instrument`` reads them.

* ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` (and ``OTEL_LOGS_EXPORTER`` for
  live mode's records): a comma-separated list of exporter names, or ``none``. Each
  name is looked up in the entry-point group the SDK uses
  (``opentelemetry_traces_exporter``, ``opentelemetry_metrics_exporter``,
  ``opentelemetry_logs_exporter``), so
  ``console``, ``otlp``, ``otlp_proto_grpc``, ``otlp_proto_http`` and any exporter a
  package registers there all work.
* ``otlp`` becomes ``otlp_proto_grpc`` or ``otlp_proto_http`` according to the
  per-signal protocol variable (``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``, ...), then
  ``OTEL_EXPORTER_OTLP_PROTOCOL``, then ``grpc``.
* Exporters are built without arguments, so each reads its own variables (the
  per-signal ``..._ENDPOINT``, ``..._HEADERS``, ``..._TIMEOUT`` first, then the general
  ones), exactly as under ``opentelemetry-instrument``.

Three differences, all deliberate:

* an unset *or empty* exporter variable means ``otlp`` (what the OpenTelemetry distro
  does, and what the specification says of empty values) — except for metrics and
  logs when the traces were sent somewhere other than OTLP and no OTLP endpoint is
  set (`fallback`): then they mean ``none``. ``OTEL_TRACES_EXPORTER=console`` alone
  is someone looking at spans on a machine with no collector; metrics exported to
  ``localhost:4317`` there would only print connection errors and hold up the exit;
* a bad value raises ``ValueError`` naming the variable and the fix before anything
  is installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Final, Literal

from opentelemetry.sdk._logs.export import LogRecordExporter
from opentelemetry.sdk.metrics.export import MetricExporter, MetricReader
from opentelemetry.sdk.trace.export import SpanExporter

from pygents_otel._text import bounded

Signal = Literal["traces", "metrics", "logs"]

EXPORTER_VARIABLE: Final[dict[Signal, str]] = {
    "traces": "OTEL_TRACES_EXPORTER",
    "metrics": "OTEL_METRICS_EXPORTER",
    "logs": "OTEL_LOGS_EXPORTER",
}
PROTOCOL_VARIABLE: Final[dict[Signal, str]] = {
    "traces": "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "metrics": "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    "logs": "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
}
GENERAL_PROTOCOL: Final = "OTEL_EXPORTER_OTLP_PROTOCOL"
ENDPOINT_VARIABLE: Final[dict[Signal, str]] = {
    "traces": "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "metrics": "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "logs": "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
}
GENERAL_ENDPOINT: Final = "OTEL_EXPORTER_OTLP_ENDPOINT"
_GROUP: Final[dict[Signal, str]] = {
    "traces": "opentelemetry_traces_exporter",
    "metrics": "opentelemetry_metrics_exporter",
    "logs": "opentelemetry_logs_exporter",
}
_BY_PROTOCOL: Final = {"grpc": "otlp_proto_grpc", "http/protobuf": "otlp_proto_http"}
_PATH: Final[dict[Signal, str]] = {
    "traces": "/v1/traces",
    "metrics": "/v1/metrics",
    "logs": "/v1/logs",
}
_KIND: Final[dict[Signal, tuple[type, ...]]] = {
    "traces": (SpanExporter,),
    "metrics": (MetricExporter, MetricReader),
    "logs": (LogRecordExporter,),
}


@dataclass(frozen=True)
class ExporterChoice:
    """One exporter to build: the entry point's name and the class it names."""

    signal: Signal
    name: str
    cls: type[Any]

    def build(self, endpoint: str | None) -> Any:
        """The exporter (or, for a pull exporter, the metric reader).

        ``endpoint`` (the ``configure(endpoint=...)`` argument) goes to the OTLP
        exporters only: as it is for gRPC, with the signal's path for HTTP.
        """
        if endpoint and self.name == "otlp_proto_grpc":
            return self.cls(endpoint=endpoint)
        if endpoint and self.name == "otlp_proto_http":
            return self.cls(endpoint=endpoint.rstrip("/") + _PATH[self.signal])
        return self.cls()


def _setting(where: str, value: str) -> str:
    """``NAME='value'`` for an error message, the value bounded."""
    return f"{where}={bounded(value)!r}"


def _protocol(signal: Signal, protocol: str | None) -> str:
    if protocol is not None:
        where, chosen = "protocol", protocol
    else:
        where, chosen = PROTOCOL_VARIABLE[signal], os.environ.get(PROTOCOL_VARIABLE[signal], "")
        if not chosen.strip():
            where, chosen = GENERAL_PROTOCOL, os.environ.get(GENERAL_PROTOCOL, "")
    chosen = chosen.strip() or "grpc"
    if chosen not in _BY_PROTOCOL:
        raise ValueError(
            f"{_setting(where, chosen)} is not an OTLP protocol pygents can export with; "
            "use 'grpc' or 'http/protobuf'"
        )
    return chosen


def fallback(signal: Signal, traces: list[ExporterChoice], endpoint: str | None) -> str:
    """What an unset exporter variable means for ``signal`` (metrics or logs), given
    the traces' exporters: ``otlp`` when the traces go over OTLP or an OTLP endpoint
    is set (the argument, the general variable or the signal's own), else ``none``.

    With no variables at all the traces go over OTLP, so everything does, as the
    specification says. Only a traces choice that leaves OTLP out turns the others
    off, and only until they are asked for by name or given an endpoint.
    """
    if endpoint or any(choice.name in _BY_PROTOCOL.values() for choice in traces):
        return "otlp"
    variables = (GENERAL_ENDPOINT, ENDPOINT_VARIABLE[signal])
    return "otlp" if any(os.environ.get(v, "").strip() for v in variables) else "none"


def _names(signal: Signal, value: str | None, default: str) -> tuple[str, list[str]]:
    """Where the list came from (for messages) and the names in it."""
    variable = EXPORTER_VARIABLE[signal]
    if value is not None:
        where, raw = f"{signal}_exporter", value
    else:
        where, raw = variable, os.environ.get(variable, "")
    if not raw.strip():
        return where, [] if default == "none" else [default]
    if raw.strip().lower() == "none":
        return where, []
    names = [name.strip() for name in raw.split(",")]
    if "" in names:
        raise ValueError(
            f"{_setting(where, raw)} has an empty exporter name; give a comma-separated "
            "list such as 'console,otlp', or 'none'"
        )
    return where, names


def choose(
    signal: Signal, value: str | None, protocol: str | None, default: str = "otlp"
) -> list[ExporterChoice]:
    """The exporters for ``signal``: from ``value`` (an argument) or the variable, or
    ``default`` (``otlp`` or ``none``, see `fallback`) when neither names any.

    Every name is resolved and its class imported here, so that a typo fails before
    ``configure()`` installs anything.
    """
    if protocol is not None:
        _protocol(signal, protocol)  # an explicit argument is checked even if unused
    where, names = _names(signal, value, default)
    group = _GROUP[signal]
    chosen: list[ExporterChoice] = []
    for name in names:
        entry = _BY_PROTOCOL[_protocol(signal, protocol)] if name == "otlp" else name
        found = entry_points(group=group, name=entry)
        if not found:
            known = sorted({ep.name for ep in entry_points(group=group)} | {"none"})
            raise ValueError(
                f"{where}: no {signal} exporter named {bounded(entry)!r} is installed; "
                f"use one of {', '.join(known)} (or install the package that provides it)"
            )
        cls = next(iter(found)).load()
        if not (isinstance(cls, type) and issubclass(cls, _KIND[signal])):
            raise ValueError(
                f"{where}: {bounded(entry)!r} in {group} is not a {signal} exporter; "
                "pick another name"
            )
        chosen.append(ExporterChoice(signal, entry, cls))
    return chosen
