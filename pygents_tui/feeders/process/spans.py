"""The spans of this process, for the turn inspector's trace view.

When the program runs with an OpenTelemetry SDK, the dashboard registers a
[`SpanCapture`][pygents_tui.feeders.process.spans.SpanCapture] on its tracer provider (the SDK's
public ``add_span_processor``), so the inspector can show a turn's whole trace:
pygents' own spans and every other span made inside the turn — an HTTP call, a
database query, a model's ``chat``. The spans go into the same bounded trace store
``pygents-tui listen`` fills from the network, and are drawn the same way.

The processor's side is one ``deque.append`` per span (from whichever thread ended
it); converting and storing happen on the dashboard's timer, in
[`SpanCapture.drain`][pygents_tui.feeders.process.spans.SpanCapture.drain]. The SDK offers no way
to remove a processor, so closing one (when its dashboard exits) makes it ignore
everything from then on.

This module needs the OpenTelemetry SDK and the OTLP message package the ``otel``
extra brings; without them the dashboard simply has no trace view in-process.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any, Final

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from pygents_otel import _names as k
from pygents_tui.feeders.traces import TraceStore
from pygents_tui.listen.decode import ReceivedSpan, ResourceInfo
from pygents_tui.listen.values import Limits, Scalar, Value, cut_middle
from pygents_tui.state import TraceTree

__all__ = ["SpanCapture", "attach", "global_provider"]

_LIMITS: Final = Limits()
_SPAN_BYTES: Final = 600  # a span's cost beyond its strings, as the decoder estimates it
_TURNS_KNOWN: Final = 20_000  # turn ids whose trace id is remembered


class SpanCapture(SpanProcessor):
    """Ended spans into a [`TraceStore`][pygents_tui.feeders.TraceStore], and each
    turn's trace id (learned as its span starts, so a running turn has one too)."""

    def __init__(self, *, pending: int = 10_000, max_bytes: int = 16 * 1024 * 1024) -> None:
        self.store = TraceStore(max_bytes=max_bytes)
        self.closed = False
        self.version = 0  # bumped by every drain that stored something
        self.dropped = 0  # spans that arrived faster than the timer drained them
        self._ended: deque[ReadableSpan] = deque(maxlen=pending)
        self._started: deque[tuple[str, int]] = deque(maxlen=pending)
        self._trace_of: OrderedDict[str, str] = OrderedDict()
        self._resources: dict[int, tuple[Resource, ResourceInfo]] = {}

    # -- the SDK's side: an append each, from any thread ------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if self.closed:
            return
        attributes = span.attributes
        uuid = attributes.get(k.TURN_UUID) if attributes else None
        if isinstance(uuid, str):
            self._started.append((uuid, span.get_span_context().trace_id))

    def on_end(self, span: ReadableSpan) -> None:
        if self.closed:
            return
        ended = self._ended
        if len(ended) == ended.maxlen:
            self.dropped += 1
        ended.append(span)

    def shutdown(self) -> None:
        self.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True

    def close(self) -> None:
        """Ignore every span from now on, and let go of what is stored."""
        self.closed = True
        self._ended.clear()
        self._started.clear()
        self._resources.clear()
        self.store = TraceStore(max_bytes=0)

    # -- the dashboard's side, on its timer --------------------------------------------------

    def drain(self, sink: Callable[[ReceivedSpan], object] | None = None) -> bool:
        """Store the spans that ended since the last call, each also handed to
        ``sink`` (the dashboard's store counts model usage); True if there were any."""
        changed = False
        started, trace_of = self._started, self._trace_of
        while started:
            uuid, trace_id = started.popleft()
            trace_of[uuid] = format(trace_id, "032x")
            changed = True
        while len(trace_of) > _TURNS_KNOWN:
            trace_of.popitem(last=False)
        ended = self._ended
        while ended:
            span = ended.popleft()
            received = self._received(span)
            if received is not None:
                self.store.add(received)
                if sink is not None:
                    sink(received)
                changed = True
        if changed:
            self.version += 1
        return changed

    def trace_of(self, uuid: str) -> str | None:
        """The trace id of the turn ``uuid``, if its span was seen."""
        return self._trace_of.get(uuid)

    def tree(self, trace_id: str) -> TraceTree | None:
        return self.store.tree(trace_id)

    # -- conversion -----------------------------------------------------------------------

    def _received(self, span: ReadableSpan) -> ReceivedSpan | None:
        context = span.context
        if context is None or span.start_time is None:
            return None
        attributes = _attributes(span.attributes or {})
        name = cut_middle(span.name, _LIMITS.max_name)
        message = cut_middle(span.status.description or "", _LIMITS.max_value)
        size = _SPAN_BYTES + len(name) + len(message)
        size += sum(len(key) + len(str(value)) for key, value in attributes.items())
        parent = span.parent
        scope = span.instrumentation_scope
        return ReceivedSpan(
            resource=self._resource(span.resource),
            scope=cut_middle(scope.name, _LIMITS.max_name) if scope is not None else "",
            trace_id=format(context.trace_id, "032x"),
            span_id=format(context.span_id, "016x"),
            parent_id=format(parent.span_id, "016x") if parent is not None else None,
            name=name,
            kind=span.kind.name.lower(),
            start_ns=span.start_time,
            end_ns=span.end_time if span.end_time is not None else span.start_time,
            status=span.status.status_code.name.lower(),
            status_message=message,
            attributes=attributes,
            dropped_attributes=span.dropped_attributes,
            size=size,
        )

    def _resource(self, resource: Resource) -> ResourceInfo:
        """One description per resource (a provider has one)."""
        known = self._resources.get(id(resource))
        if known is not None and known[0] is resource:
            return known[1]
        attributes = resource.attributes
        service = _text(attributes.get(k.SERVICE_NAME)) or k.UNKNOWN_SERVICE
        pid = attributes.get(k.PROCESS_PID)
        info = ResourceInfo(
            service=cut_middle(service, _LIMITS.max_name),
            instance=cut_middle(_text(attributes.get(k.SERVICE_INSTANCE)) or "", _LIMITS.max_name),
            host=_text(attributes.get(k.HOST_NAME)),
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        )
        if len(self._resources) > 16:
            self._resources.clear()
        self._resources[id(resource)] = (resource, info)
        return info


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _scalar(value: object) -> Scalar:
    if isinstance(value, str):
        return cut_middle(value, _LIMITS.max_value)
    if isinstance(value, (bool, int, float)):
        return value
    return cut_middle(repr(value), _LIMITS.max_value)


def _attributes(attributes: Mapping[str, Any]) -> dict[str, Value]:
    """The SDK's attributes, bounded as received ones are: at most ``max_attributes``,
    strings cut, sequences kept to ``max_items`` scalars."""
    kept: dict[str, Value] = {}
    for key, value in islice(attributes.items(), _LIMITS.max_attributes):
        if isinstance(value, (str, bool, int, float)):
            kept[cut_middle(key, _LIMITS.max_name)] = _scalar(value)
        else:
            items = tuple(_scalar(v) for v in islice(value, _LIMITS.max_items))
            kept[cut_middle(key, _LIMITS.max_name)] = items
    return kept


def attach(provider: object) -> SpanCapture | None:
    """A capture registered on ``provider`` if it is the SDK's ``TracerProvider``;
    ``None`` for the API's no-op or proxy provider (no SDK configured)."""
    if not isinstance(provider, TracerProvider):
        return None
    capture = SpanCapture()
    provider.add_span_processor(capture)
    return capture


def global_provider() -> object:
    """The provider ``opentelemetry.trace`` hands out (a proxy until an SDK is set)."""
    return trace.get_tracer_provider()
