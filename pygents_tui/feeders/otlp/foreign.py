"""Other frameworks' agents, folded from their spans alone: each run of an agent is a
turn of that agent, ended when its span arrives.

What a span is comes from `genai.read_foreign` (the GenAI conventions or
OpenInference, never a framework's own names). An agent is keyed by its service and
its *name*, never by ``gen_ai.agent.id`` (some senders put a per-run value there).
A run failed when its own status says so, or when its last step failed and the run
did not say (OpenTelemetry's instrumentation of the OpenAI Agents SDK marks only the
failed model call); a step that failed before others (a tool that raised, its error
shown to the model) is one the run got past. A run nested in a run of the same agent
(seen: two spans per run) is counted once. Its model calls' tokens are credited
through its trace, as pygents' own turns' are: the run's turn carries the trace id
(a trace that holds runs of two agents, a handoff, is credited to the first).

Such a sender has no live records: a run shows when its span ends.
"""

from __future__ import annotations

from typing import Final

from pygents import StopReason
from pygents_otel import _names as k
from pygents_tui.feeders.otlp.genai import Foreign, Role, read_foreign
from pygents_tui.feeders.otlp.live import end_time
from pygents_tui.feeders.otlp.services import Services
from pygents_tui.feeders.traces import TraceStore
from pygents_tui.listen.decode import ReceivedSpan
from pygents_tui.state import ServiceState, Store

__all__ = ["RUN", "ForeignRuns"]

RUN: Final = "run"
"""What a foreign run's turn shows as its tool."""

_MAX_DEPTH: Final = 64  # how far up a failed span's parents are followed (a hostile cycle ends)


class ForeignRuns:
    """Folds other frameworks' runs into the store it is given (see the module
    docstring); `Services` says which service and agent a span is about."""

    def __init__(self, store: Store, services: Services, traces: TraceStore) -> None:
        self.store = store
        self.services = services
        self.traces = traces

    def fold(
        self, service: ServiceState, span: ReceivedSpan, found: Foreign, mono: float, wall: int
    ) -> None:
        """Fold ``span`` of ``service``, read as ``found``; only runs make turns (a
        tool or model call is kept in the trace, its tokens counted through it)."""
        if found.role is not Role.RUN or found.agent is None:
            return  # (a model call of a pygents tool, instrumented apart, is one of these)
        service.framework = span.scope or "unnamed"
        agent = self.services.agent_of(service, {k.AGENT_NAME: found.agent})
        if agent is None or self._nested(span, found.agent):
            return
        started = self.services.local_time(service, span.start_ns, mono, wall)
        turn = self.store.open_turn(service, f"{RUN}:{span.span_id}", agent, RUN, started)
        if turn.ended is not None:
            return  # a duplicate of a run already folded
        turn.trace_id, turn.span_id, turn.parent_id = span.trace_id, span.span_id, span.parent_id
        turn.start_ns = span.start_ns
        error = found.error if found.failed else self._failed_under(span)
        reason = StopReason.ERROR if error is not None else StopReason.COMPLETED
        at = self.services.local_time(service, span.end_ns, mono, wall)
        self.store.finish(turn, reason, error, end_time(turn, span.end_ns, at))

    def _nested(self, span: ReceivedSpan, agent: str) -> bool:
        """Whether a run of ``agent`` under ``span`` was folded already (children end
        first): the run is then counted once, by that one."""
        for other in self._under(span):
            found = read_foreign(other)
            if found is not None and found.role is Role.RUN and found.agent == agent:
                return True
        return False

    def _failed_under(self, span: ReceivedSpan) -> str | None:
        """Why the run failed when its own status does not say: its last step (the
        child that ended last) failed. A failed step followed by others (a tool that
        raised, whose error the model was shown) is one the run got past."""
        children = [s for s in self.traces.spans(span.trace_id) if s.parent_id == span.span_id]
        if not children:
            return None
        last = max(children, key=_end)
        if last.status != "error":
            return None
        reason = last.attributes.get(k.ERROR_TYPE)
        return str(reason) if reason else last.status_message or f"{last.name} failed"

    def _under(self, span: ReceivedSpan) -> list[ReceivedSpan]:
        """The spans of ``span``'s trace that have it as an ancestor."""
        spans = self.traces.spans(span.trace_id)
        parents = {s.span_id: s.parent_id for s in spans}
        found = []
        for other in spans:
            parent, depth = other.parent_id, 0
            while parent is not None and depth < _MAX_DEPTH:
                if parent == span.span_id:
                    found.append(other)
                    break
                parent, depth = parents.get(parent), depth + 1
        return found


def _end(span: ReceivedSpan) -> int:
    return span.end_ns
