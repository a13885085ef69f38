"""The live records of the OTLP feeder: what ``pygents_otel`` sends while things run
(``pygents_otel.configure(live=True)``), folded into the store.

A turn can be learned of in any order: its ``pygents.turn.start`` record opens it
(with its timeout, so the running panel can draw it against its deadline); its
``pygents.turn.end`` record or its span (`Folding`) closes it, whichever comes
first, and the other only adds what it knows. A turn is counted once. The other
records concern an agent (runs, puts, pauses, context sizes), a snapshot of one
(its state, queue and context, and the turn it runs), or the process (heartbeats,
goodbye).
"""

from __future__ import annotations

from collections.abc import Callable

from pygents import AgentHook
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
from pygents_tui.feeders.otlp.services import Services
from pygents_tui.listen.decode import ReceivedRecord
from pygents_tui.state import (
    PAUSED,
    RESUMED,
    RUN_STARTED,
    AgentEntry,
    ServiceState,
    Store,
    TurnEntry,
    ValueEntry,
    added,
    bounded_context,
    bounded_queue,
    evicted,
    queued,
    turn_started,
)

__all__ = ["LiveRecords", "end_time"]

_Handler = Callable[[ServiceState, ReceivedRecord, float], None]
_AgentHandler = Callable[[ServiceState, AgentEntry, ReceivedRecord, float], None]


def end_time(turn: TurnEntry, end_ns: int, at: float) -> float:
    """When ``turn`` ended, on the store's clock: exact when both ends come from the
    same sender's clock, else when its end arrived (never before its start)."""
    if turn.start_ns and end_ns >= turn.start_ns:
        return turn.started + (end_ns - turn.start_ns) / 1e9
    return max(at, turn.started)


class LiveRecords:
    """Folds live records into the store it is given (see the module docstring);
    `Services` says which service and agent a record is about."""

    def __init__(self, store: Store, services: Services) -> None:
        self.store = store
        self.services = services
        self._handlers: dict[str, _Handler] = {
            k.TURN_START: self._turn_start,
            k.TURN_END: self._turn_end,
            k.TURN_VALUE: self._turn_value,
            k.HEARTBEAT: self._heartbeat,
            k.GOODBYE: self._goodbye,
            **dict.fromkeys((k.TOOL_START, k.TOOL_END), self._ignore),
        }
        # The records about one agent, named in their attributes: one that names none
        # is ignored (its service is still live).
        self._of_agent: dict[str, _AgentHandler] = {
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
        }

    def fold(self, service: ServiceState, record: ReceivedRecord, mono: float, wall: int) -> None:
        """Fold ``record`` of ``service``, which arrived at ``mono`` (``wall``); a record
        of a kind this version does not know is left alone."""
        name = record.event_name
        handler = self._handlers.get(name)
        of_agent = self._of_agent.get(name) if handler is None else None
        if of_agent is None and name.startswith((k.CONTEXT_QUEUE_PREFIX, k.CONTEXT_POOL_PREFIX)):
            of_agent = self._context
        if handler is None and of_agent is None:
            return
        service.live = True
        at = self.services.local_time(service, record.time_ns, mono, wall)
        if handler is not None:
            handler(service, record, at)
            return
        agent = self.services.agent_of(service, record.attributes)
        if agent is not None and of_agent is not None:
            of_agent(service, agent, record, at)

    # -- turns ------------------------------------------------------------------------------------

    def _record_turn(
        self, service: ServiceState, record: ReceivedRecord, at: float, tool: str
    ) -> tuple[TurnEntry, AgentEntry | None] | None:
        """The turn a live record is about (opened if this is the first word of it) and
        its agent; ``None`` for a record naming no turn, which is ignored."""
        uuid = as_text(record.attributes.get(k.TURN_UUID))
        if not uuid:
            return None
        agent = self.services.agent_of(service, record.attributes)
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
        if turn.returns is None:  # (its end may have said it returned no value)
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
        if attributes.get(k.OUTPUT_KIND) is not None:
            turn.returns = False  # no value: a turn or context item routed, or a verdict
        self.store.add_values(turn, as_int(attributes.get(k.TURN_VALUES)))
        output = as_text(attributes.get(k.OUTPUT_PREVIEW))
        if output is not None:
            turn.output_preview = output
        self._link(turn, record)
        if turn.ended is not None:
            return  # the span closed it already
        error = as_text(attributes.get(k.ERROR_TYPE))
        reason = stop_reason(attributes.get(k.TURN_STOP_REASON), error)
        self.store.finish(turn, reason, error, end_time(turn, record.time_ns, at))

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

    # -- snapshots -------------------------------------------------------------------------------

    def _snapshot(
        self, service: ServiceState, agent: AgentEntry, record: ReceivedRecord, at: float
    ) -> None:
        attributes = record.attributes
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

    # -- agent and process records ---------------------------------------------------------

    def _ignore(self, service: ServiceState, record: ReceivedRecord, at: float) -> None:
        """Known, nothing to fold (the service's last-seen time is already updated)."""

    def _goodbye(self, service: ServiceState, record: ReceivedRecord, at: float) -> None:
        """The process ended normally: its agents are finished (`c` clears them), not
        stale. A turn still running cannot end now; it ends as lost."""
        if service.ended:
            return
        service.ended = True
        lost = self.store.lose_running(service, at, "ended")
        text = f"process ended: {len(lost)} running turn(s) lost" if lost else "process ended"
        self.store.note(service, at, service.label, "service", text)

    def _heartbeat(self, service: ServiceState, record: ReceivedRecord, at: float) -> None:
        """Live mode is on in that process (again, if it had said goodbye: a process
        may uninstrument and instrument again)."""
        if service.ended:
            service.ended = False
            self.store.note(service, at, service.label, "service", "sending again")

    def _run_start(
        self, service: ServiceState, agent: AgentEntry, record: ReceivedRecord, at: float
    ) -> None:
        agent.began()
        self.store.note(service, at, agent.label, "run", RUN_STARTED)

    def _run_end(
        self, service: ServiceState, agent: AgentEntry, record: ReceivedRecord, at: float
    ) -> None:
        text = agent.run_ended(stop_reason(record.attributes.get(k.RUN_STOP_REASON), None))
        self.store.note(service, at, agent.label, "run", text)

    def _agent_hook(
        self, service: ServiceState, agent: AgentEntry, record: ReceivedRecord, at: float
    ) -> None:
        attributes = record.attributes
        depth = as_int(attributes.get(k.QUEUE_DEPTH))
        if depth is not None:
            agent.queue_depth = max(depth, 0)
        name = record.event_name
        if name == k.AFTER_PUT:
            tool = tool_of(attributes)
            self.store.note(service, at, agent.label, "put", queued(tool or "turn"))
        elif name == k.ON_PAUSE or attributes.get(k.PAUSED) is True:
            agent.hooked(AgentHook.ON_PAUSE)
            if name == k.ON_PAUSE:
                self.store.note(service, at, agent.label, "pause", PAUSED)
        elif name == k.ON_RESUME:
            agent.hooked(AgentHook.ON_RESUME)
            self.store.note(service, at, agent.label, "pause", RESUMED)

    def _context(
        self, service: ServiceState, agent: AgentEntry, record: ReceivedRecord, at: float
    ) -> None:
        attributes = record.attributes
        name = record.event_name
        queue = name.startswith(k.CONTEXT_QUEUE_PREFIX)
        store = "queue" if queue else "pool"
        capacity = as_capacity(attributes, k.CONTEXT_SIZE, k.CONTEXT_LIMIT)
        if capacity is not None and queue:
            agent.context_queue = capacity
        elif capacity is not None:
            agent.context_pool = capacity
        event = name.rsplit(".", 1)[-1]
        item = as_text(attributes.get(k.ITEM_ID))
        if event == "on_evict":
            agent.evictions += 1
            self.store.note(service, at, agent.label, "evict", evicted(store, item or "an item"))
        elif event in ("after_add", "after_append"):
            self.store.note(service, at, agent.label, "context", added(store, item or "item"))
