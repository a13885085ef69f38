"""Turns the runtime's scopes and hook events into spans, span events and metrics.

Uses only the core's public subscription seam: one span per scope (agent run, turn,
tool invocation), made *current* while the tool body runs (``on_enter``/``on_exit``),
and every hook event as an event on the span of the object that fired it.
"""

from __future__ import annotations

import time
from contextvars import Token
from typing import Any, Final

from opentelemetry import context, trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import Link, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from pygents import (
    AgentHook,
    Event,
    HookType,
    Scope,
    ScopeKind,
    StopReason,
    Subscriber,
    ToolHook,
    Turn,
    TurnHook,
)
from pygents_otel import _exceptions as x
from pygents_otel import _names as n
from pygents_otel import _spans as s
from pygents_otel._metrics import Metrics

_PROPAGATOR: Final = TraceContextTextMapPropagator()
TRACEPARENT: Final = "traceparent"


class _SpanState:
    """What the subscriber keeps in ``scope.state`` for one span."""

    __slots__ = (
        "counts",
        "dropped",
        "first_turn",
        "last_value",
        "recorded",
        "saved",
        "span",
        "start",
        "tokens",
        "values",
    )

    def __init__(self, span: trace.Span) -> None:
        self.span = span
        self.start = time.perf_counter()
        self.values = 0  # per-value events seen
        self.counts: dict[HookType, int] = {}  # repetitive events seen, by kind
        self.recorded = 0  # events recorded on this span
        self.dropped = 0  # events left out to stay within the span's budget
        self.tokens: list[Token[Context]] = []
        # The context the tool body had when its last step ended: restored at the next
        # step, so spans a streaming tool keeps open across yields stay current.
        self.saved: Context | None = None
        # An agent run's input and output for a GenAI viewer (content capture only):
        # the first turn it took and the last value it routed.
        self.first_turn: Turn | None = None
        self.last_value: object = _NOTHING


_NOTHING: Final = object()
_RUN_IO: Final = (AgentHook.ON_TURN_VALUE, AgentHook.AFTER_TURN)
_SCOPE_OF: Final[dict[type, ScopeKind]] = {ToolHook: ScopeKind.TOOL, TurnHook: ScopeKind.TURN}


def _wanted_kind(event: Event) -> ScopeKind:
    """Turn events go on the turn span, tool events on the tool span, the rest on the
    agent-run span."""
    return _SCOPE_OF.get(type(event.type), ScopeKind.AGENT_RUN)


class TelemetrySubscriber(Subscriber):
    """The OpenTelemetry view of the runtime; see the module docstring."""

    def __init__(
        self,
        tracer: Tracer,
        metrics: Metrics | None,
        content: s.Content,
        max_value_events: int = 16,
        max_span_events: int = 96,
        exception_messages: bool = True,
    ) -> None:
        self.tracer = tracer
        self.metrics = metrics
        self.content = content
        # False: failures record the exception's type only (see _exceptions).
        self.exception_messages = exception_messages
        self.max_value_events = max_value_events
        # Below the SDK's default of 128 events a span, leaving room for exceptions.
        self.max_span_events = max_span_events

    def __repr__(self) -> str:
        return "<pygents_otel TelemetrySubscriber>"

    # -- scopes ------------------------------------------------------------------------

    def _state(self, scope: Scope | None) -> _SpanState | None:
        while scope is not None:
            found: _SpanState | None = scope.state.get(self)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def on_start(self, scope: Scope) -> None:
        if not is_instrumentation_enabled():
            return
        parent = self._state(scope.parent)
        ctx = trace.set_span_in_context(parent.span) if parent is not None else None
        links: list[Link] = []
        if scope.kind is ScopeKind.AGENT_RUN:
            name, attributes = s.agent_span(scope.target)
        elif scope.kind is ScopeKind.TURN:
            name, attributes = s.turn_span(scope.target, scope.agent)
            conversation = attributes.get(n.CONVERSATION_ID)
            if conversation is not None and parent is not None and parent.span.is_recording():
                # The run that takes a turn of a conversation is part of it too.
                parent.span.set_attribute(n.CONVERSATION_ID, conversation)
            origin = _origin(scope.target)
            if origin is not None:
                links.append(Link(origin, {n.LINK_TYPE: n.QUEUED_FROM}))
        else:
            name, attributes = s.tool_span(scope.target, scope.turn, scope.agent)
        span = self.tracer.start_span(
            name, context=ctx, kind=SpanKind.INTERNAL, attributes=attributes, links=links
        )
        scope.state[self] = _SpanState(span)

    def span_of(self, scope: Scope) -> trace.Span | None:
        """The span recording exactly ``scope`` (not an enclosing one), while it is open."""
        state: _SpanState | None = scope.state.get(self)
        return state.span if state is not None else None

    def trace_id_of(self, scope: Scope) -> str | None:
        """The trace id of the span recording ``scope``, while it is open."""
        state = self._state(scope)
        if state is None:
            return None
        context_ = state.span.get_span_context()
        return format(context_.trace_id, "032x") if context_.is_valid else None

    def on_enter(self, scope: Scope) -> None:
        state = scope.state.get(self)
        if state is not None:
            ctx = state.saved if state.saved is not None else trace.set_span_in_context(state.span)
            state.tokens.append(context.attach(ctx))

    def on_exit(self, scope: Scope) -> None:
        state = scope.state.get(self)
        if state is not None and state.tokens:
            state.saved = context.get_current()
            context.detach(state.tokens.pop())

    def on_turn_created(self, turn: Turn) -> None:
        _remember_origin(turn)

    def on_end(self, scope: Scope) -> None:
        state: _SpanState | None = scope.state.pop(self, None)
        if state is None:
            return
        span, error, reason = state.span, scope.error, scope.stop_reason
        attributes = s.end_attributes(scope.kind.value, reason, error)
        if state.first_turn is not None:
            content = self.content
            attributes.update(s.run_input(state.first_turn, content))
            if state.last_value is not _NOTHING:
                output = content.dump(state.last_value)
                attributes.update(s.io_attributes(n.OI_OUTPUT, n.OI_OUTPUT_MIME, output))
        if state.values:
            attributes[n.SPAN_VALUES] = state.values
        if scope.kind is ScopeKind.TURN:
            kind = s.output_kind(scope.target, scope.agent, reason)
            if kind is not None:
                attributes[n.OUTPUT_KIND] = kind
        if state.dropped:
            attributes[n.DROPPED_EVENTS] = state.dropped
        span.set_attributes(attributes)
        failed = reason in (StopReason.ERROR, StopReason.TIMEOUT)
        if failed and isinstance(error, Exception):
            messages = self.exception_messages
            span.add_event(x.EVENT, x.event_attributes(error, messages))
            span.set_status(Status(StatusCode.ERROR, x.status_description(error, messages)))
        span.end()
        if self.metrics is not None:
            self._measure(scope, state, attributes.get(n.ERROR_TYPE) if failed else None)

    def _measure(self, scope: Scope, state: _SpanState, error_type: Any) -> None:
        assert self.metrics is not None
        seconds = time.perf_counter() - state.start
        error = str(error_type) if error_type else None
        if scope.kind is ScopeKind.AGENT_RUN:
            self.metrics.agent_run(scope.target.name, seconds, error)
        elif scope.kind is ScopeKind.TURN:
            self.metrics.turn(scope.target.tool.name, seconds, scope.stop_reason)
        else:
            self.metrics.tool_call(scope.target.name, seconds, error, state.values)

    # -- events ------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        kind = event.type
        if kind is AgentHook.BEFORE_PUT:
            _remember_origin(event["turn"])
        state = self._event_state(event)
        span = state.span if state is not None else trace.get_current_span()
        if not span.is_recording():
            return
        index: int | None = None
        if state is not None:
            if kind in _RUN_IO and self.content.capture:
                if state.first_turn is None:
                    state.first_turn = event["turn"]
                if kind is AgentHook.ON_TURN_VALUE:
                    state.last_value = event["value"]
            if kind in s.BULK_EVENTS:
                if kind in s.VALUE_EVENTS:
                    index = state.values
                    state.values += 1
                seen = state.counts.get(kind, 0)
                state.counts[kind] = seen + 1
                if seen >= self.max_value_events:
                    state.dropped += 1
                    return
            if state.recorded >= self.max_span_events:
                state.dropped += 1
                return
            state.recorded += 1
        if self.content.capture:
            if kind is ToolHook.BEFORE_INVOKE:
                arguments = s.call_arguments(event.args, event.kwargs, self.content)
                span.set_attribute(n.TOOL_CALL_ARGUMENTS, arguments)
                span.set_attributes(s.io_attributes(n.OI_INPUT, n.OI_INPUT_MIME, arguments))
            elif kind is ToolHook.AFTER_INVOKE:
                result = self.content.dump(event["result"])
                span.set_attribute(n.TOOL_CALL_RESULT, result)
                span.set_attributes(s.io_attributes(n.OI_OUTPUT, n.OI_OUTPUT_MIME, result))
        span.add_event(n.EVENT_NAMES[kind], s.event_attributes(event, index, self.content))

    def _event_state(self, event: Event) -> _SpanState | None:
        want = _wanted_kind(event)
        scope = event.scope
        while scope is not None:
            if scope.kind is want:
                return scope.state.get(self)
            scope = scope.parent
        return None


def _remember_origin(turn: Turn) -> None:
    """Store the current trace context in the turn, unless it already carries one."""
    if not trace.get_current_span().get_span_context().is_valid:
        return
    if TRACEPARENT not in turn.metadata:
        _PROPAGATOR.inject(turn.metadata)


def _origin(turn: Turn) -> trace.SpanContext | None:
    if TRACEPARENT not in turn.metadata:
        return None
    carrier = {k: v for k, v in turn.metadata.items() if isinstance(v, str)}
    origin = trace.get_current_span(_PROPAGATOR.extract(carrier)).get_span_context()
    return origin if origin.is_valid else None
