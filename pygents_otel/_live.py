"""Live mode: OpenTelemetry log records with an event name, sent while things run.

Spans are exported when they end, so whoever only receives spans cannot see a turn
that is still running, an agent's queue filling up, or a stream's progress. Live
mode (opt-in: ``instrument(live=True)``) adds a second signal, built by ``_records``:

* `LiveSubscriber`, on the runtime's subscription seam next to the
  `TelemetrySubscriber`: a record when an agent run, a turn or a tool invocation
  starts and ends, for each agent hook event a dashboard shows (puts, pauses,
  resumes, turn errors and timeouts), for each change to an agent's context stores,
  and for streamed values — the first ``first_values`` of each turn, then one every
  ``value_every`` seconds with the running count, so that a fast stream costs a
  bounded number of records.
* `Snapshots`, a daemon thread that every ``interval`` seconds sends each known
  agent's state and one heartbeat for the process: a listener that starts late or
  lost a record catches up within a second, and a process that stops sending can
  be told from one with nothing to say.
* A goodbye record when live mode is closed normally (``Telemetry.shutdown``,
  ``uninstrument()``, the interpreter's exit), before the providers flush: a
  listener marks the process ended instead of waiting for it to go stale. A process
  that is killed sends none, and goes stale.

Every record carries the trace context of the span of its scope (the turn span for
a turn's records, the agent-run span for an agent's), so a receiver links the two
signals. Records go through the standard Logs API to whatever ``LoggerProvider``
is configured; nothing here exports anything itself.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from typing import ClassVar, Final

from opentelemetry import trace
from opentelemetry._logs import Logger, SeverityNumber
from opentelemetry.context import Context
from opentelemetry.instrumentation.utils import is_instrumentation_enabled

from pygents import (
    Agent,
    AgentHook,
    AgentRegistry,
    Event,
    HookType,
    Scope,
    ScopeKind,
    StopReason,
    Subscriber,
    Subscription,
    subscribe,
)
from pygents_otel import _names as n
from pygents_otel import _records as r
from pygents_otel import _spans as s
from pygents_otel._contents import Contents
from pygents_otel._subscriber import TelemetrySubscriber

__all__ = ["LiveMode", "LiveSubscriber", "Snapshots"]

VALUE_EVERY: Final = 0.25
"""Past a turn's first values, at most one value record per this many seconds."""

MAX_SNAPSHOTS: Final = 256
"""Agents snapshotted per interval (running ones first): a bound on the records a
process with thousands of registered agents sends."""

_FAILED: Final = frozenset((StopReason.ERROR, StopReason.TIMEOUT))
_WARNINGS: Final[frozenset[HookType]] = frozenset(
    (AgentHook.ON_TURN_ERROR, AgentHook.ON_TURN_TIMEOUT)
)

_log = logging.getLogger("pygents_otel")


class _Live:
    """What the live subscriber keeps in ``scope.state``."""

    __slots__ = ("context", "next_at", "values")

    def __init__(self, context: Context | None) -> None:
        self.context = context  # the scope's span, as a context for its records
        self.values = 0  # values streamed (turn scopes)
        self.next_at = 0.0  # when the next value record may go, past the first ones


def _own_tool(scope: Scope) -> bool:
    """Whether ``scope`` is a turn's own tool invocation, which sends no records of
    its own: the turn's start and end records already name the tool and carry its
    stop reason and error, and a record costs the SDK about 17 µs (W4l). A tool that
    another tool calls (its parent is a tool) still sends its start and end."""
    parent = scope.parent
    return scope.kind is ScopeKind.TOOL and parent is not None and parent.kind is ScopeKind.TURN


class LiveSubscriber(Subscriber):
    """Sends the live records; see the module docstring.

    Subscribed *after* ``spans``, so that at a scope's start the span it links its
    records to already exists.
    """

    event_types: ClassVar[frozenset[HookType] | None] = r.EVENTS

    def __init__(
        self,
        logger: Logger,
        spans: TelemetrySubscriber,
        content: s.Content,
        first_values: int = 16,
        value_every: float = VALUE_EVERY,
    ) -> None:
        self.logger = logger
        self.spans = spans
        self.content = content
        self.first_values = first_values
        self.value_every = value_every
        # Agents with a run in progress, and their run span's context: read by the
        # snapshot thread, so guarded by a lock (the event loop only adds and removes).
        self._lock = threading.Lock()
        self._running: dict[str, tuple[Agent, Context | None]] = {}
        # The snapshots' lists, with the previews they keep from one round to the next;
        # rounds never overlap (the thread's, and any a caller takes itself).
        self.contents = Contents(content)
        self._round = threading.Lock()

    def __repr__(self) -> str:
        return "<pygents_otel LiveSubscriber>"

    def emit(
        self,
        name: str,
        attributes: r.Attributes,
        context: Context | None = None,
        severity: SeverityNumber = SeverityNumber.INFO,
    ) -> None:
        """One record: the event name both as ``event_name`` and as the ``event.name``
        attribute older back ends read."""
        attributes[n.EVENT_NAME] = name
        self.logger.emit(
            timestamp=time.time_ns(),
            context=context,
            severity_number=severity,
            event_name=name,
            attributes=attributes,
        )

    # -- scopes ------------------------------------------------------------------------------

    def on_start(self, scope: Scope) -> None:
        if not is_instrumentation_enabled() or _own_tool(scope):
            return
        span = self.spans.span_of(scope)
        context = trace.set_span_in_context(span) if span is not None else None
        scope.state[self] = _Live(context)
        kind = scope.kind
        if kind is ScopeKind.AGENT_RUN:
            agent: Agent = scope.target
            with self._lock:
                self._running[agent.uuid] = (agent, context)
            attributes = r.run_start(agent)
        elif kind is ScopeKind.TURN:
            attributes = r.turn_start(scope.target, scope.agent, self.content)
        else:
            attributes = r.tool_start(scope.target, scope.turn, scope.agent)
        self.emit(n.START[kind], attributes, context)

    def on_end(self, scope: Scope) -> None:
        state: _Live | None = scope.state.pop(self, None)
        if state is None:
            return
        kind, reason, error = scope.kind, scope.stop_reason, scope.error
        if kind is ScopeKind.AGENT_RUN:
            agent: Agent = scope.target
            with self._lock:
                self._running.pop(agent.uuid, None)
            attributes = r.run_end(agent, reason, error)
        elif kind is ScopeKind.TURN:
            attributes = r.turn_end(
                scope.target, scope.agent, reason, error, state.values, self.content
            )
        else:
            attributes = r.tool_end(scope.target, scope.turn, scope.agent, reason, error)
        severity = SeverityNumber.WARN if reason in _FAILED else SeverityNumber.INFO
        self.emit(n.END[kind], attributes, state.context, severity)

    # -- events ------------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        kind = event.type
        if kind is r.VALUE_EVENT:
            self._value(event)
        elif kind in r.AGENT_EVENTS:
            agent: Agent = event["agent"]
            run = agent.scope
            severity = SeverityNumber.WARN if kind in _WARNINGS else SeverityNumber.INFO
            self.emit(n.EVENT_NAMES[kind], r.agent_event(event), self._context(run), severity)
        else:
            self._store(event)

    def _value(self, event: Event) -> None:
        scope = event.scope
        while scope is not None and scope.kind is not ScopeKind.TURN:
            scope = scope.parent
        state: _Live | None = scope.state.get(self) if scope is not None else None
        if state is None:
            return
        state.values += 1
        count = state.values
        if count > self.first_values:
            now = time.monotonic()
            if now < state.next_at:
                return
            state.next_at = now + self.value_every
        attributes = r.value(event["turn"], event.agent, count, self.content, event["value"])
        self.emit(n.EVENT_NAMES[event.type], attributes, state.context)

    def _store(self, event: Event) -> None:
        """A context event, sent only for an agent's own stores changing while it runs
        (a store a tool keeps for itself is nobody's context; snapshots report the
        sizes of an agent's stores whenever they change)."""
        agent: Agent | None = event.agent
        store = event.source
        if agent is None or (store is not agent.context_queue and store is not agent.context_pool):
            return
        attributes = r.context_event(event, agent, self.content)
        self.emit(n.EVENT_NAMES[event.type], attributes, self._context(event.scope))

    def _context(self, scope: Scope | None) -> Context | None:
        """The context of the innermost scope with a span of ours."""
        while scope is not None:
            found: _Live | None = scope.state.get(self)
            if found is not None:
                return found.context
            scope = scope.parent
        return None

    # -- snapshots (on the snapshot thread) --------------------------------------------------

    def agents(self) -> list[tuple[Agent, Context | None]]:
        """The agents to snapshot: those running, then the registered ones."""
        with self._lock:
            chosen = dict(self._running)
        try:
            registered = AgentRegistry.all()
        except RuntimeError:  # changed while copied (another thread): next time
            registered = []
        for agent in registered:
            if len(chosen) >= MAX_SNAPSHOTS:
                break
            chosen.setdefault(agent.uuid, (agent, None))
        return list(chosen.values())[:MAX_SNAPSHOTS]

    def snapshot(self) -> None:
        """Every known agent's state, then the process heartbeat."""
        with self._round:
            agents = self.agents()
            try:
                for agent, context in agents:
                    self.emit(n.SNAPSHOT, r.snapshot(agent, self.contents), context)
            finally:
                self.contents.end_round()
            self.emit(n.HEARTBEAT, r.heartbeat(len(agents)))

    def goodbye(self) -> None:
        """The process's last live record (see the module docstring)."""
        self.emit(n.GOODBYE, {})


class Snapshots:
    """The thread that calls `LiveSubscriber.snapshot` every ``interval`` seconds,
    starting at once. A daemon: it never holds the interpreter's exit up, and it is
    stopped at exit before the providers flush."""

    def __init__(self, live: LiveSubscriber, interval: float) -> None:
        self.live = live
        self.interval = interval
        self._stopped = threading.Event()
        self._failed = False
        self._thread = threading.Thread(target=self._loop, name="pygents-otel-live", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            try:
                self.live.snapshot()
            except Exception:
                if not self._failed:  # once: the next interval tries again
                    self._failed = True
                    _log.exception("pygents live snapshots failed; they carry on")
            if self._stopped.wait(self.interval):
                return


class LiveMode:
    """Live mode switched on: the subscription and the snapshot thread, closed
    together by `close` (``uninstrument()``, or at the interpreter's exit)."""

    def __init__(
        self,
        logger: Logger,
        spans: TelemetrySubscriber,
        content: s.Content,
        first_values: int,
        interval: float,
    ) -> None:
        self.subscriber = LiveSubscriber(logger, spans, content, first_values)
        self._subscription: Subscription = subscribe(self.subscriber)
        self.snapshots = Snapshots(self.subscriber, interval)
        self.snapshots.start()
        atexit.register(self.close)

    def close(self) -> None:
        atexit.unregister(self.close)
        self._subscription.close()
        self.snapshots.stop()
        # After the last snapshot, so nothing of this process's follows it.
        try:
            self.subscriber.goodbye()
        except Exception:  # a provider already shut down must not fail the shutdown
            _log.exception("pygents live goodbye could not be sent")
