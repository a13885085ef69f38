"""OpenTelemetry for pygents: spans, span events and metrics for every agent run,
turn and tool invocation, following the GenAI semantic conventions.

* ``PygentsInstrumentor().instrument(tracer_provider=..., meter_provider=...,
  capture_content=...)`` — or no code at all: ``opentelemetry-instrument python app.py``.
* ``configure(service_name=...)`` — a one-call SDK from the standard ``OTEL_*`` variables.
* ``live=True`` (either of the two, or ``OTEL_INSTRUMENTATION_PYGENTS_LIVE=true``) also
  sends OpenTelemetry log records while things run, which ``pygents-tui listen`` shows.

The public names load on first use. ``pygents-tui listen`` imports the telemetry names
(``pygents_otel._names``, standard library only) with just the ``listen`` extra, which
does not install the OpenTelemetry SDK; importing a submodule runs this file first, so
it must not import the SDK. Without the ``otel`` extra, ``from pygents_otel import
configure`` raises a one-line ``MissingExtraError`` naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygents import __version__
from pygents._extras import import_from_extra
from pygents._public import publish as _publish

if TYPE_CHECKING:
    from pygents_otel._instrumentor import PygentsInstrumentor, trace_id_of
    from pygents_otel._model_call import model_call
    from pygents_otel._setup import Telemetry, configure
    from pygents_otel._tally import SpanCounts

# The top-level module the 'otel' extra installs (the API, the SDK and the exporters).
OTEL_PROVIDES = ("opentelemetry",)

_HOMES = {
    "_instrumentor": ("PygentsInstrumentor", "trace_id_of"),
    "_model_call": ("model_call",),
    "_setup": ("Telemetry", "configure"),
    "_tally": ("SpanCounts",),
}


def _load() -> None:
    """Import every module of the public API and bind its names here, so that later
    lookups no longer reach ``__getattr__``; all at once, so that each class reports
    ``pygents_otel`` (``publish``) whichever name was asked for first."""
    namespace = globals()
    # The SDK first: with only the 'listen' extra, ``opentelemetry`` exists (the OTLP
    # messages) without the API, and ``from opentelemetry import trace`` would fail
    # with a bare "cannot import name" instead of a missing module naming the extra.
    import_from_extra("opentelemetry.sdk", "pygents_otel", "otel", OTEL_PROVIDES)
    for module, names in _HOMES.items():
        loaded = import_from_extra(f"pygents_otel.{module}", "pygents_otel", "otel", OTEL_PROVIDES)
        namespace.update({name: getattr(loaded, name) for name in names})
    # Tracebacks and reprs name ``pygents_otel.Telemetry``, not its private module.
    _publish(__name__, __all__, namespace)


def __getattr__(name: str) -> Any:
    """The public API, loaded from its private modules on first use (this is also how
    the ``opentelemetry_instrumentor`` entry point, ``pygents_otel:PygentsInstrumentor``,
    resolves)."""
    if not any(name in names for names in _HOMES.values()):
        raise AttributeError(f"module 'pygents_otel' has no attribute {name!r}")
    _load()
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "PygentsInstrumentor",
    "SpanCounts",
    "Telemetry",
    "__version__",
    "configure",
    "model_call",
    "trace_id_of",
]
