"""Tracing for the assistant, switched on by the standard OpenTelemetry variables.

Tracing is on when ``OTEL_TRACES_EXPORTER`` names exporters (``console``, ``otlp``,
``console,otlp``, any exporter a package registers) or, with that variable unset, when
an OTLP endpoint is set (``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``). ``OTEL_TRACES_EXPORTER=none``,
``OTEL_SDK_DISABLED=true`` or none of the variables: off, and nothing is installed.

When on, :func:`pygents_otel.configure` builds the SDK from the same variables and
instruments pygents (agent runs, turns, tool calls), and the OpenAI instrumentation
adds a ``chat`` span, with its token usage, for every model call — under the
``execute_tool respond`` span that made it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

import pygents_otel

__all__ = ["SERVICE_NAME", "Tracing", "start_tracing", "tracing_requested"]

SERVICE_NAME = "pygents-assistant"
"""The service name when ``OTEL_SERVICE_NAME`` does not set one."""
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def _set(environ: Mapping[str, str], name: str) -> str:
    return environ.get(name, "").strip()


def tracing_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the variables ask for traces (see the module docstring)."""
    env = os.environ if environ is None else environ
    if _set(env, "OTEL_SDK_DISABLED").lower() == "true":
        return False
    exporter = _set(env, "OTEL_TRACES_EXPORTER")
    if exporter:
        return exporter.lower() != "none"
    return any(_set(env, name) for name in _ENDPOINTS)


@dataclass
class Tracing:
    """What :func:`start_tracing` set up; :meth:`shutdown` before exiting."""

    telemetry: pygents_otel.Telemetry
    openai: OpenAIInstrumentor
    exporters: str  # what the traces go to, for the start line

    def shutdown(self) -> None:
        """Stop instrumenting the client, then export what is left (bounded: see
        :meth:`pygents_otel.Telemetry.shutdown`)."""
        self.openai.uninstrument()
        self.telemetry.shutdown()


def start_tracing() -> Tracing | None:
    """Tracing as the variables ask for it, or ``None`` when they do not.

    Metrics follow ``OTEL_METRICS_EXPORTER`` when it is set; otherwise they go where
    an OTLP endpoint was given, and nowhere when there is none (``console`` tracing
    alone must not make the metrics look for a collector on localhost).
    """
    env = os.environ  # what configure() reads too
    if not tracing_requested(env):
        return None
    metrics = None
    if not _set(env, "OTEL_METRICS_EXPORTER") and not _set(env, "OTEL_EXPORTER_OTLP_ENDPOINT"):
        metrics = "none"
    telemetry = pygents_otel.configure(
        service_name=_set(env, "OTEL_SERVICE_NAME") or SERVICE_NAME, metrics_exporter=metrics
    )
    # The instrumentation package ships without type hints for its constructor.
    instrumentor = OpenAIInstrumentor()  # type: ignore[no-untyped-call]
    instrumentor.instrument(
        tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider
    )
    exporters = _set(env, "OTEL_TRACES_EXPORTER") or "otlp"
    return Tracing(telemetry, instrumentor, exporters)
