"""OpenTelemetry for pygents: spans, span events and metrics for every agent run,
turn and tool invocation, following the GenAI semantic conventions.

* ``PygentsInstrumentor().instrument(tracer_provider=..., meter_provider=...,
  capture_content=...)`` — or no code at all: ``opentelemetry-instrument python app.py``.
* ``configure(service_name=...)`` — a one-call SDK from the standard ``OTEL_*`` variables.
* ``live=True`` (either of the two, or ``OTEL_INSTRUMENTATION_PYGENTS_LIVE=true``) also
  sends OpenTelemetry log records while things run, which ``pygents-tui listen`` shows.
"""

from __future__ import annotations

from pygents import __version__
from pygents._extras import missing_extra
from pygents._public import publish as _publish

try:
    from pygents_otel._instrumentor import PygentsInstrumentor, trace_id_of
    from pygents_otel._setup import Telemetry, configure
    from pygents_otel._tally import SpanCounts
except ModuleNotFoundError as error:
    # Without the 'otel' extra: one line naming it, not "No module named 'opentelemetry'".
    replacement = missing_extra(error, "pygents_otel", "otel", ("opentelemetry",))
    if replacement is None:
        raise
    raise replacement from None

__all__ = [
    "PygentsInstrumentor",
    "SpanCounts",
    "Telemetry",
    "__version__",
    "configure",
    "trace_id_of",
]

# Tracebacks and reprs name ``pygents_otel.Telemetry``, not its private module.
_publish(__name__, __all__, globals())
