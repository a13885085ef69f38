"""The write side of the fleet model: folding received spans and live records into
services, agents and turns.

A turn can be learned of in any order: its ``pygents.turn.start`` record opens it
(with its timeout, so the running panel can draw it against its deadline); its
``pygents.turn.end`` record or its span closes it, whichever comes first, and the
other only adds what it knows. A turn is counted once. With live records off, spans
alone still give ended turns, attributed to their agent when the agent-run span
(which ends last) arrives.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import groupby
from typing import TypeVar

from pygents_otel import _names as k
from pygents_tui.feeders.otlp import contents
from pygents_tui.feeders.otlp.coerce import (
    as_capacity,
    as_float,
    as_int,
    as_tags,
    as_text,
    stop_reason,
    tool_of,
)
from pygents_tui.feeders.otlp.services import Handler, Services
from pygents_tui.feeders.traces import TraceStore
from pygents_tui.listen.decode import Batch, ReceivedRecord, ReceivedSpan
from pygents_tui.state import (
    AgentEntry,
    ServiceState,
    Store,
    TurnEntry,
    ValueEntry,
    bounded_context,
    bounded_queue,
    turn_started,
)

__all__ = ["Folding"]

_Item = TypeVar("_Item", ReceivedSpan, ReceivedRecord)


def _by_resource(items: Sequence[_Item]) -> Iterator[list[_Item]]:
    """A request's items in runs of one resource (decoding keeps a resource group's
    items together, sharing one `ResourceInfo` object)."""
    for _, run in groupby(items, key=lambda item: id(item.resource)):
        yield list(run)


class Folding(Services):
    """Spans and turn records folded into turns (see the module docstring)."""

    def __init__(self, store: Store, traces: TraceStore) -> None:
        super().__init__(store, traces)
        self._handlers: dict[str, Handler] = {
            k.TURN_START: self._turn_start,
            k.TURN_END: self._turn_end,
            k.TURN_VALUE: self._turn_value,
            k.RUN_START: self._run_start,
            k.RUN_END: self._run_end,
            k.SNAPSHOT: self._snapshot,
            **dict.fromkeys(
                (
                    k.AFTER_PUT,
                    k.BEFORE_TURN,
                    k.ON_PAUSE,
                    k.ON_RESUME,
                    k.ON_TURN_ERROR,  # depth only: the turn's end reports the error
                    k.ON_TURN_TIMEOUT,
                ),
                self._agent_hook,
            ),
            k.HEARTBEAT: self._heartbeat,
            k.GOODBYE: self._goodbye,
            **dict.fromkeys((k.TOOL_START, k.TOOL_END), self._ignore),
        }

    # -- entry points -------------------------------------------------------------------------

    def fold_batch(self, batch: Batch, mono: float, wall: int) -> None:
        """Fold one received request, which arrived at ``mono`` (``wall``), one
        resource's items at a time: each sender's clock is fed with all of its items'
        times first (`observe_clocks`), then they are folded. Resolving a service
        for the clock and then again for folding created every service a request
        named over the bound twice (the first ones were evicted by the last before
        being folded), so each counted two evictions."""
        for spans in _by_resource(batch.spans):
            self.observe_clocks(spans, mono, wall)
            for span in spans:
                self.fold_span(span, mono, wall)
        for records in _by_resource(batch.records):
            self.observe_clocks(records, mono, wall)
            for record in records:
                self.fold_record(record, mono, wall)
        for resource, points in batch.points:
            service = self.service(resource, mono)
            if service is None:
                self.store.counts["replaced_dropped"] += points
            else:
                service.points += points
                self.store.counts["points"] += points

    def fold_span(self, span: ReceivedSpan, mono: float, wall: int) -> None:
        service = self.service(span.resource, mono)
        if service is None:
            self.store.counts["replaced_dropped"] += 1
            return
        service.spans += 1
        self.store.counts["spans"] += 1
        self.traces.add(span)
        self.store.span_arrived(span)
        attributes = span.attributes
        uuid = attributes.get(k.TURN_UUID)
        if isinstance(uuid, str) and uuid and span.name.startswith(k.TURN_SPAN_PREFIX):
            self._turn_span(service, span, uuid, mono, wall)
        elif attributes.get(k.OPERATION) == k.INVOKE_AGENT:
            self._agent_span(service, span)

    def fold_record(self, record: ReceivedRecord, mono: float, wall: int) -> None:
        service = self.service(record.resource, mono)
        if service is None:
            self.store.counts["replaced_dropped"] += 1
            return
        service.records += 1
        self.store.counts["records"] += 1
        name = record.event_name
        handler = self._handlers.get(name)
        if handler is None and name.startswith((k.CONTEXT_QUEUE_PREFIX, k.CONTEXT_POOL_PREFIX)):
            handler = self._context
        if handler is not None:
            service.live = True
            handler(service, record, self.local_time(service, record.time_ns, mono, wall))

    # -- turns ------------------------------------------------------------------------------------

    def _end_time(self, turn: TurnEntry, end_ns: int, at: float) -> float:
        """Exact when both ends come from the same sender's clock."""
        if turn.start_ns and end_ns >= turn.start_ns:
            return turn.started + (end_ns - turn.start_ns) / 1e9
        return max(at, turn.started)

    def _record_turn(
        self, service: ServiceState, record: ReceivedRecord, at: float, tool: str
    ) -> tuple[TurnEntry, AgentEntry | None] | None:
        """The turn a live record is about (opened if this is the first word of it) and
        its agent; ``None`` for a record naming no turn, which is ignored."""
        uuid = as_text(record.attributes.get(k.TURN_UUID))
        if not uuid:
            return None
        agent = self.agent_of(service, record.attributes)
        return self.store.open_turn(service, uuid, agent, tool, at), agent

    @staticmethod
    def _link(turn: TurnEntry, record: ReceivedRecord) -> None:
        """The turn's trace and span, from the first record that names them."""
        turn.trace_id = turn.trace_id or record.trace_id
        turn.span_id = turn.span_id or record.span_id

    def _turn_start(self, service: ServiceState, record: ReceivedRecord, at: float) -> None:
        attributes = record.attributes
        tool = tool_of(attributes) or "?"
        found = self._record_turn(service, record, at, tool)
        if found is None:
            return
        turn, agent = found
        turn.returns = attributes.get(k.TURN_STREAMING) is False
        if turn.ended is not None:
            self.store.returned(turn)
            return  # its end came first: a start now must not make it run again
        turn.started, turn.start_ns, turn.tool = at, record.time_ns, tool
        turn.timeout = as_float(attributes.get(k.TURN_TIMEOUT)) or turn.timeout
        turn.streaming = attributes.get(k.TURN_STREAMING) is True
        turn.args_preview = as_text(attributes.get(k.ARGS_PREVIEW))
        turn.tags = as_tags(attributes.get(k.TAGS))
        self._link(turn, record)
        self.store.start_running(turn)
        if agent is not None:
            agent.current_turn, agent.current_tool = turn.key, tool
            depth = as_int(attributes.get(k.QUEUE_DEPTH))  # the turn has left the queue
            agent.queue_depth = max(depth, 0) if depth is not None else agent.queue_depth
            agent.began()
        self.store.note(service, at, turn.agent_label, "turn", turn_started(tool))

    def _turn_end(self, service: ServiceState, record: ReceivedRecord, at: float) -> None:
        attributes = record.attributes
        found = self._record_turn(service, record, at, tool_of(attributes) or "?")
        if found is None:
            return
        turn = found[0]
        self.store.add_values(turn, as_int(attributes.get(k.TURN_VALUES)))
        output = as_text(attributes.get(k.OUTPUT_PREVIEW))
        if output is not None:
            turn.output_preview = output
        self._link(turn, record)
        if turn.ended is not None:
            return  # the span closed it already
        error = as_text(attributes.get(k.ERROR_TYPE))
        reason = stop_reason(attributes.get(k.TURN_STOP_REASON), error)
        self.store.finish(turn, reason, error, self._end_time(turn, record.time_ns, at))

    def _turn_value(self, service: ServiceState, record: ReceivedRecord, at: float) -> None:
        attributes = record.attributes
        tool = as_text(attributes.get(k.TOOL_NAME)) or "?"
        found = self._record_turn(service, record, at, tool)
        if found is None:
            return
        turn, agent = found
        if turn.ended is None:
            self.store.start_running(turn)  # its start was lost, but it evidently runs
        count = as_int(attributes.get(k.TURN_VALUES))
        self.store.add_values(turn, count if count is not None else turn.values + 1)
        preview = as_text(attributes.get(k.VALUE_PREVIEW))
        if preview is not None and agent is not None:
            self.store.previews_seen = True
            agent.values_tail.append(ValueEntry(at, turn.tool, preview))

    def _turn_span(
        self, service: ServiceState, span: ReceivedSpan, uuid: str, mono: float, wall: int
    ) -> None:
        attributes = span.attributes
        agent = self.agent_of(service, attributes)
        if agent is None and span.parent_id is not None:
            owner = self._agent_spans.get(span.parent_id)
            agent = self.store.agents.get(owner) if owner is not None else None
        tool = as_text(attributes.get(k.PYGENTS_TOOL)) or span.name[len(k.TURN_SPAN_PREFIX) :]
        started = self.local_time(service, span.start_ns, mono, wall)
        turn = self.store.open_turn(service, uuid, agent, tool, started)
        turn.trace_id, turn.span_id, turn.parent_id = span.trace_id, span.span_id, span.parent_id
        if not turn.start_ns:
            turn.start_ns = span.start_ns
        turn.timeout = turn.timeout or as_float(attributes.get(k.TURN_TIMEOUT)) or 0.0
        turn.tags = turn.tags or as_tags(attributes.get(k.TAGS))
        self.store.add_values(turn, as_int(attributes.get(k.SPAN_VALUES)))
        if turn.ended is not None:
            return  # its end record closed it already
        error = as_text(attributes.get(k.ERROR_TYPE))
        reason = stop_reason(attributes.get(k.TURN_STOP_REASON), error, span.status == "error")
        ended = self._end_time(turn, span.end_ns, self.local_time(service, span.end_ns, mono, wall))
        self.store.finish(turn, reason, span.status_message or error, ended)

    # -- snapshots -------------------------------------------------------------------------------

    def _snapshot(self, service: ServiceState, record: ReceivedRecord, at: float) -> None:
        attributes = record.attributes
        agent = self.agent_of(service, attributes)
        if agent is None:
            return
        state = as_text(attributes.get(k.AGENT_STATE))
        agent.reported(state)
        depth = as_int(attributes.get(k.QUEUE_DEPTH))
        if depth is not None:
            agent.queue_depth = max(depth, 0)
        queue = as_capacity(attributes, k.QUEUE_SIZE, k.QUEUE_LIMIT)
        agent.context_queue = queue or agent.context_queue
        pool = as_capacity(attributes, k.POOL_SIZE, k.POOL_LIMIT)
        agent.context_pool = pool or agent.context_pool
        self._contents(agent, attributes)
        current = as_text(attributes.get(k.CURRENT_TURN))
        turn = self._current(service, agent, record, current, at) if current else None
        if turn is not None:
            agent.current_turn, agent.current_tool = turn.key, turn.tool
        elif not current and state == "idle":
            agent.current_turn = agent.current_tool = None

    def _contents(self, agent: AgentEntry, attributes: contents.Attributes) -> None:
        """A snapshot's lists of waiting turns and context items, where the sender
        sent them (`pygents_tui.feeders.otlp.contents`): the agent's queue and context
        panels then show them, bounded as the in-process ones are."""
        queued = contents.queued_turns(attributes)
        if queued is not None:
            agent.queued, agent.queued_more = bounded_queue(queued.rows, queued.more)
        context = contents.context_contents(attributes)
        if context is not None:
            agent.context = bounded_context(context)

    def _current(
        self, service: ServiceState, agent: AgentEntry, record: ReceivedRecord, uuid: str, at: float
    ) -> TurnEntry | None:
        """The turn a snapshot says ``agent`` is running; opened, running, when its start
        was missed (this listener started later), from the tool, timeout and start time
        the snapshot carries. ``None`` when that turn has ended already (the snapshot
        was taken just before its end record, and sent just after)."""
        key = f"{service.id}/{uuid}"
        turn = self.store.turns.get(key) or self.store.running.get(key)
        if turn is not None:
            return turn if turn.ended is None else None
        attributes = record.attributes
        turn = self.store.open_turn(service, uuid, agent, tool_of(attributes) or "?", at)
        started = as_int(attributes.get(k.TURN_STARTED))
        if started and record.time_ns >= started:
            turn.started = at - (record.time_ns - started) / 1e9  # the sender's clock
            turn.start_ns = started
        turn.timeout = as_float(attributes.get(k.TURN_TIMEOUT)) or 0.0
        turn.trace_id = record.trace_id  # the agent run's trace, which the turn shares
        self.store.start_running(turn)
        return turn

    # -- agent spans ----------------------------------------------------------------------------

    def _agent_span(self, service: ServiceState, span: ReceivedSpan) -> None:
        agent = self.agent_of(service, span.attributes)
        if agent is None:
            return
        self._agent_spans[span.span_id] = agent.key
        while len(self._agent_spans) > self.store.limits.agent_spans:
            self._agent_spans.popitem(last=False)
        for child in self.traces.spans(span.trace_id):
            uuid = child.attributes.get(k.TURN_UUID)
            if child.parent_id == span.span_id and isinstance(uuid, str):
                turn = self.store.turns.get(f"{service.id}/{uuid}")
                if turn is not None and turn.agent is None:
                    self.store.adopt(turn, agent)
        if not service.live:  # no live records: the span is all we know of the run
            reason = stop_reason(
                span.attributes.get(k.AGENT_STOP_REASON), None, span.status == "error"
            )
            agent.run_ended(reason)  # (no live records: no log line either)
