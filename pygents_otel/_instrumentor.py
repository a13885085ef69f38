"""``PygentsInstrumentor``: the contrib ``BaseInstrumentor`` for pygents."""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry._logs import get_logger
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)
from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider

from pygents import Scope, Subscriber, Subscription, Turn, __version__, subscribe
from pygents._identity import IDENTITY
from pygents_otel import _names as n
from pygents_otel import _spans as s
from pygents_otel._live import LiveMode, LiveSubscriber
from pygents_otel._metrics import Metrics
from pygents_otel._subscriber import TelemetrySubscriber
from pygents_otel._text import bounded

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
MAX_LENGTH_ENV = "PYGENTS_OTEL_CONTENT_MAX_LENGTH"
MAX_VALUE_EVENTS_ENV = "PYGENTS_OTEL_MAX_VALUE_EVENTS"
EXCEPTION_MESSAGE_ENV = "OTEL_INSTRUMENTATION_PYGENTS_CAPTURE_EXCEPTION_MESSAGE"
LIVE_ENV = "OTEL_INSTRUMENTATION_PYGENTS_LIVE"
SNAPSHOT_INTERVAL_ENV = "OTEL_INSTRUMENTATION_PYGENTS_SNAPSHOT_INTERVAL"
DEFAULT_SNAPSHOT_INTERVAL = 1.0
MIN_INTERVAL = 0.05
MAX_INTERVAL = 3600.0
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
# The content modes the GenAI instrumentations (openai-v2 and others) read from the
# same variable: one setting captures content for them and for pygents. pygents puts
# content where it always does (span attributes and events), whichever mode says yes.
_CONTENT_ON = ("span_only", "span_and_event", "event_only")
_CONTENT_OFF = ("no_content",)
DEFAULT_CONTENT_MAX_LENGTH = 2048

_log = logging.getLogger("pygents_otel")


def _capture(value: bool | None) -> bool:
    """Off unless turned on: the argument, else the variable as a true/false word or
    as one of the GenAI instrumentations' content modes; anything else is refused."""
    if value is not None:
        return bool(value)
    raw = os.environ.get(CAPTURE_ENV, "").strip()
    if raw.lower() in _CONTENT_ON:
        return True
    if raw.lower() in _CONTENT_OFF:
        return False
    fix = "set it to true or false, or to SPAN_ONLY, SPAN_AND_EVENT, EVENT_ONLY or NO_CONTENT"
    return _switch(None, CAPTURE_ENV, False, fix)


def _switch(value: object, variable: str, default: bool, fix: str) -> bool:
    """The argument, else the variable, else ``default``. A value of the variable that
    is neither true nor false is refused rather than guessed (``fix`` says what to
    set): these switches decide what leaves the process."""
    if value is not None:
        return bool(value)
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise ValueError(f"{variable}={bounded(raw)!r} is neither true nor false; {fix}")


def _exception_messages(value: bool | None) -> bool:
    """``True`` unless turned off: OpenTelemetry's default."""
    fix = "set it to 'false' to record the exception type only, or 'true' (the default)"
    return _switch(value, EXCEPTION_MESSAGE_ENV, True, fix)


def _live(value: bool | None) -> bool:
    """Off unless turned on: live records cost a few records per turn."""
    fix = "set it to 'true' to send live records, or 'false' (the default)"
    return _switch(value, LIVE_ENV, False, fix)


def _snapshot_interval(value: object) -> float:
    """The argument, else the variable, else 1 s; between 0.05 s and an hour."""
    fix = f"give a number of seconds from {MIN_INTERVAL} to {MAX_INTERVAL:g}, e.g. 1"
    where = "snapshot_interval"
    shown = repr(value)
    if value is None:
        raw = os.environ.get(SNAPSHOT_INTERVAL_ENV, "").strip()
        if not raw:
            return DEFAULT_SNAPSHOT_INTERVAL
        where, shown = SNAPSHOT_INTERVAL_ENV, repr(bounded(raw))
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{where}={shown} is not a number; {fix}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{where} must be a number of seconds, got {type(value).__name__}; {fix}")
    if not MIN_INTERVAL <= value <= MAX_INTERVAL:  # NaN fails too
        raise ValueError(f"{where}={shown} is out of range; {fix}")
    return float(value)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        return int(raw) if raw else default
    except ValueError:
        _log.warning("%s=%r is not an integer; using %d", name, bounded(raw), default)
        return default


def _content_max_length(value: object) -> int:
    """The argument, else the variable, else 2048; refused below 1 (a negative or zero
    length would not cut anything, and recorded content must stay bounded)."""
    fix = "it is the number of characters kept per recorded value, at least 1"
    if value is None:
        raw = os.environ.get(MAX_LENGTH_ENV, "").strip()
        if not raw:
            return DEFAULT_CONTENT_MAX_LENGTH
        try:
            chosen = int(raw)
        except ValueError:
            raise ValueError(
                f"{MAX_LENGTH_ENV}={bounded(raw)!r} is not an integer; {fix}"
            ) from None
        where = MAX_LENGTH_ENV
    elif isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"content_max_length must be an int, got {type(value).__name__}; {fix}")
    else:
        chosen, where = value, "content_max_length"
    if chosen < 1:
        raise ValueError(f"{where}={chosen} is refused; {fix}")
    return chosen


@dataclass(frozen=True)
class Settings:
    """What ``instrument()`` was given, checked once (before dormancy, if any)."""

    tracer_provider: Any
    meter_provider: Any
    content: s.Content
    max_value_events: int
    max_span_events: int
    exception_messages: bool
    live: bool = False
    logger_provider: Any = None
    snapshot_interval: float = DEFAULT_SNAPSHOT_INTERVAL

    @classmethod
    def of(cls, kwargs: dict[str, Any]) -> Settings:
        capture = kwargs.get("capture_content")
        max_value_events = kwargs.get("max_value_events")
        max_span_events = kwargs.get("max_span_events")
        return cls(
            tracer_provider=kwargs.get("tracer_provider"),
            meter_provider=kwargs.get("meter_provider"),
            content=s.Content(
                capture=_capture(capture),
                max_length=_content_max_length(kwargs.get("content_max_length")),
            ),
            max_value_events=(
                _env_int(MAX_VALUE_EVENTS_ENV, 16) if max_value_events is None else max_value_events
            ),
            max_span_events=96 if max_span_events is None else max_span_events,
            exception_messages=_exception_messages(kwargs.get("capture_exception_message")),
            live=_live(kwargs.get("live")),
            logger_provider=kwargs.get("logger_provider"),
            snapshot_interval=_snapshot_interval(kwargs.get("snapshot_interval")),
        )


class PygentsInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Traces and measures every agent run, turn and tool invocation.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    max_value_events=None, max_span_events=None, content_max_length=None,
    capture_exception_message=None, live=None, logger_provider=None,
    snapshot_interval=None)``.
    Without explicit providers it
    uses the global ones. If no OpenTelemetry SDK is configured yet it stays dormant
    (costing nothing per event) and switches itself on at the first turn created
    after an SDK has been installed.

    ``live=True`` (or ``OTEL_INSTRUMENTATION_PYGENTS_LIVE=true``) also sends log
    records while things run, through ``logger_provider`` (default: the global one),
    and a snapshot of every agent each ``snapshot_interval`` seconds (1 by default):
    what ``pygents-tui listen`` shows live. Off, no logger is created at all.
    """

    _subscription: Subscription | None = None
    _live: LiveMode | None = None

    def instrumentation_dependencies(self) -> Collection[str]:
        return (f"pygents >= {__version__}",)

    def _instrument(self, **kwargs: Any) -> None:
        settings = Settings.of(kwargs)  # bad arguments raise here, before anything
        if settings.tracer_provider is None and not _sdk_installed():
            # No SDK yet: wait for one without costing anything per event. The first
            # turn created after an SDK is installed switches tracing on.
            _log.info("no OpenTelemetry SDK is configured yet; pygents tracing is dormant")
            self._subscription = subscribe(_Waker(self, settings))
            return
        self._activate(settings)

    def _activate(self, settings: Settings) -> TelemetrySubscriber:
        tracer = trace.get_tracer(
            "pygents_otel", __version__, settings.tracer_provider, schema_url=n.SCHEMA_URL
        )
        meter = metrics.get_meter(
            "pygents_otel", __version__, settings.meter_provider, schema_url=n.SCHEMA_URL
        )
        subscriber = TelemetrySubscriber(
            tracer,
            Metrics(meter),
            settings.content,
            settings.max_value_events,
            settings.max_span_events,
            settings.exception_messages,
        )
        self._close_live()
        if self._subscription is not None:
            self._subscription.close()
        self._subscription = subscribe(subscriber)
        _identify(settings.tracer_provider or trace.get_tracer_provider())
        if settings.live:  # subscribed after the spans' subscriber: see LiveSubscriber
            logger = get_logger(
                n.LOGGER_NAME, __version__, settings.logger_provider, schema_url=n.SCHEMA_URL
            )
            self._live = LiveMode(
                logger,
                subscriber,
                settings.content,
                settings.max_value_events,
                settings.snapshot_interval,
            )
        return subscriber

    def _close_live(self) -> None:
        if self._live is not None:
            self._live.close()
            self._live = None

    @property
    def live(self) -> LiveSubscriber | None:
        """The live records' subscriber, or ``None`` when live mode is off (or dormant)."""
        return self._live.subscriber if self._live is not None else None

    def _uninstrument(self, **kwargs: Any) -> None:
        IDENTITY.clear()
        self._close_live()
        if self._subscription is not None:
            self._subscription.close()
            subscriber = self._subscription.subscriber
            if isinstance(subscriber, TelemetrySubscriber) and subscriber.metrics is not None:
                subscriber.metrics.close()
            self._subscription = None

    @property
    def subscriber(self) -> TelemetrySubscriber | None:
        """The active subscriber, or ``None`` when not instrumented (or dormant)."""
        if self._subscription is None:
            return None
        found = self._subscription.subscriber
        return found if isinstance(found, TelemetrySubscriber) else None


def _identify(provider: Any) -> None:
    """Say who this process is (`pygents._identity`): the ``service.name`` and
    ``service.instance.id`` of the resource its spans carry, so that a Redis worker
    can write them beside its heartbeat. A provider without a resource (not the
    SDK's), or a resource without both, says nothing."""
    resource = getattr(provider, "resource", None)
    attributes = getattr(resource, "attributes", None) or {}
    service = attributes.get(n.SERVICE_NAME)
    instance = attributes.get(n.SERVICE_INSTANCE)
    if isinstance(service, str) and isinstance(instance, str) and service and instance:
        IDENTITY.set(service, instance)
    else:
        IDENTITY.clear()


def _sdk_installed() -> bool:
    return not isinstance(trace.get_tracer_provider(), (ProxyTracerProvider, NoOpTracerProvider))


class _Waker(Subscriber):
    """Stands in while no SDK is configured: it only looks at turn creation, which is
    cheap and happens before any turn runs, and activates tracing once an SDK exists."""

    def __init__(self, instrumentor: PygentsInstrumentor, settings: Settings) -> None:
        self.instrumentor = instrumentor
        self.settings = settings

    def on_turn_created(self, turn: Turn) -> None:
        if _sdk_installed():
            self.instrumentor._activate(self.settings).on_turn_created(turn)


def trace_id_of(scope: Scope) -> str | None:
    """The trace id (32 hex digits) of the span recording ``scope``, while it runs."""
    subscriber = PygentsInstrumentor().subscriber
    if subscriber is None:
        return None
    return subscriber.trace_id_of(scope)
