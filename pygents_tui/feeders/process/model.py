"""The in-process feeder: this process's runtime written into the dashboard's one
store (`pygents_tui.state.Store`) as a fleet of one, and no UI.

It is fed by the core's subscription seam at almost no cost to the agents: it follows
scopes (agent runs and turns) and *cold* hook events only — puts, pauses, errors,
timeouts, context changes — so every per-turn path of the runtime stays on its fast
track. Ingestion is one ``deque.append`` and a count;
[`DashboardModel.drain`][pygents_tui.DashboardModel.drain],
called by the UI on a timer, folds the records into the store's agents, turns, rings
and counters, through the same writes the OTLP feeder makes. Live state (queue depth,
current turn, context sizes, a stream's values so far) is read from the agents
themselves on every drain (`pygents_tui.feeders.process.local.LiveProcess`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

from pygents import (
    COLD_EVENTS,
    Agent,
    AgentHook,
    AgentRegistry,
    ContextItem,
    ContextPoolHook,
    ContextQueueHook,
    Event,
    HookType,
    Scope,
    ScopeKind,
    StopReason,
    Subscriber,
    ToolHook,
    ToolType,
    Turn,
    TurnHook,
)
from pygents_tui.feeders.process._agents import THROUGHPUT_SECONDS, AgentState
from pygents_tui.feeders.process._turn_entries import LogEntry, TurnDetails, TurnRecord, ValueRecord
from pygents_tui.feeders.process.local import LiveProcess
from pygents_tui.state import (
    PAUSED,
    RESUMED,
    RUN_STARTED,
    StoreLimits,
    ValueEntry,
    added,
    evicted,
    queued,
    turn_started,
)
from pygents_tui.text._errors import summary
from pygents_tui.text._preview import preview

__all__ = [
    "THROUGHPUT_SECONDS",
    "AgentState",
    "DashboardModel",
    "LogEntry",
    "TurnDetails",
    "TurnRecord",
    "ValueRecord",
]

_START, _END, _EVENT = 0, 1, 2
_TURN = ScopeKind.TURN  # read per turn: a module constant is cheaper than the enum attribute
SHOWN_EVENTS: Final = frozenset(
    kind
    for kind in COLD_EVENTS
    if not kind.name.startswith("BEFORE_")
    and kind not in (TurnHook.ON_ERROR, ToolHook.ON_ERROR, TurnHook.ON_TIMEOUT)
)
"""The events the model records: cold ones only (so every per-turn path of the runtime
stays on its fast track), and of those not the ``BEFORE_`` half of a pair (its
``AFTER_`` says the same, later) nor a turn's failure (its end reports it, once)."""


class DashboardModel(LiveProcess, Subscriber):
    """See the module docstring.

    ``clock`` (monotonic seconds) times everything the model records; ``wall_clock``
    (seconds since the epoch) is read once, to show those times as dates. Both are the
    seam that makes a test's timings, bars and dates exact."""

    event_types: ClassVar[frozenset[HookType] | None] = SHOWN_EVENTS
    scope_kinds: ClassVar[frozenset[ScopeKind] | None] = frozenset(
        (ScopeKind.AGENT_RUN, ScopeKind.TURN)
    )

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_log: int = 2000,
        max_inbox: int = 1_000_000,
        trace_id: Callable[[Scope], str | None] | None = None,
        wall_clock: Callable[[], float] = time.time,
        max_finished: int = 50,
        tracer_provider: object | None = None,
    ) -> None:
        super().__init__(
            StoreLimits(log=max_log, **_IN_PROCESS),
            clock,
            max_finished=max_finished,
            tracer_provider=tracer_provider,
        )
        self.wall_epoch = wall_clock()  # ... and as dates, this one being ``epoch``
        self.store.wall_clock = self.wall_time
        self.inbox: deque[tuple[int, Any, float, str | None]] = deque(maxlen=max_inbox)
        self.received = 0
        self.processed = 0
        self.completed = 0  # turns completed, by every agent, cleared or not
        self.trace_id = trace_id
        self._open: dict[Scope, TurnRecord] = {}  # the running turns, by their scope
        self._seen_values: dict[Scope, int] = {}
        self._settling: list[tuple[TurnRecord, str | None, BaseException | None]] = []

    # -- the seam: one append (and one count) each, nothing else -----------------------

    def on_start(self, scope: Scope) -> None:
        self.received += 1  # counted here: a full inbox silently drops its oldest
        if self.trace_id is None:
            self.inbox.append((_START, scope, self.clock(), None))
            return
        trace = None
        if scope.kind is _TURN:
            try:  # the span exists only now; a drain later would be too late
                trace = self.trace_id(scope)
            except Exception:
                trace = None
        self.inbox.append((_START, scope, self.clock(), trace))

    def on_end(self, scope: Scope) -> None:
        self.received += 1
        self.inbox.append((_END, scope, self.clock(), None))

    def on_event(self, event: Event) -> None:
        self.received += 1
        self.inbox.append((_EVENT, event, self.clock(), None))

    # -- processing, on the UI's timer ---------------------------------------------------

    @property
    def log_total(self) -> int:
        """Log lines ever written (the log keeps the last ``max_log``)."""
        return self.store.log.total

    @property
    def dropped(self) -> int:
        """Records lost because the inbox overflowed before a drain."""
        return self.received - self.processed - len(self.inbox)

    def fold(self) -> bool:
        """Process every pending record, then tail running streams and read the live
        agents (the store's `drain` calls this first). True if anything changed."""
        inbox = self.inbox
        count = len(inbox)
        changed = count > 0
        for _ in range(count):
            kind, obj, at, trace = inbox.popleft()
            if kind == _START:
                self._started(obj, at, trace)
            elif kind == _END:
                self._ended(obj, at)
            else:
                self._event(obj, at)
        self.processed += count
        self._settle()
        if self._tail_streams():
            changed = True
        if self.refresh_live(self.clock()):
            changed = True
        if self.drain_spans():
            changed = True
        return changed

    def _settle(self) -> None:
        """Previews for the turns that ended in this drain and can still be shown;
        then every one of them lets go of its turn (its output and values are the
        program's to free).

        Done once per drain, newest first, rather than as each turn ends: in a busy drain
        most ended turns are already pushed out of the bounded tables, and previews built
        for them would be thrown away unseen.
        """
        settling = self._settling
        recent_left = self.store.recent.maxlen or 0
        turns = self.store.turns
        agent_left: dict[str, int] = {}
        for record, output, error in reversed(settling):
            kept = recent_left > 0 or record.key in turns
            recent_left -= 1
            if record.agent is not None:  # an agent's last turns are kept too
                left = agent_left.get(record.agent, TURNS_KEPT)
                kept = kept or left > 0
                agent_left[record.agent] = left - 1
            turn = record.turn
            if turn is not None:
                details = TurnDetails.of(turn, record.streaming, output, error) if kept else None
                record.let_go(details)
        settling.clear()

    def _note(self, at: float, agent: str, kind: str, text: str) -> None:
        self.store.note(self.process, at, agent, kind, text)

    def _started(self, scope: Scope, at: float, trace: str | None = None) -> None:
        if scope.kind is ScopeKind.AGENT_RUN:
            state = self.agent(scope.target.name)
            state.began()
            self._note(at, state.name, "run", RUN_STARTED)
            return
        turn: Turn = scope.target
        agent = self.agent(scope.agent.name) if scope.agent is not None else None
        uuid = turn.uuid
        record = TurnRecord(
            key=uuid,
            uuid=uuid,
            service=self.process,
            agent=agent.key if agent is not None else None,
            agent_label=agent.label if agent is not None else "—",
            turn=turn,
            tool=turn.tool.name,
            started=at,
            timeout=float(turn.timeout),
            streaming=turn.tool.streaming,
            trace_id=trace,
        )
        self._open[scope] = record
        self.store.index_turn(record)
        self.store.start_running(record)
        if agent is not None:
            self._note(at, agent.label, "turn", turn_started(record.tool))

    def _ended(self, scope: Scope, at: float) -> None:
        if scope.kind is ScopeKind.AGENT_RUN:
            state = self.agent(scope.target.name)
            text = state.run_ended(scope.stop_reason)
            if scope.error is not None and isinstance(scope.error, Exception):
                state.last_error = summary(scope.error, 120, preview)
            self._note(at, state.name, "run", text)
            return
        record = self._open.pop(scope, None)
        if record is None:
            return
        self._tail_stream(scope, record, at)
        self._seen_values.pop(scope, None)
        error = scope.error if scope.stop_reason is not StopReason.COMPLETED else None
        turn: Turn = scope.target
        output = None  # its preview, made here only when the values tail needs it
        if (
            not record.streaming
            and error is None
            and scope.stop_reason is StopReason.COMPLETED
            and record.agent is not None
            and not isinstance(turn.output, (Turn, ContextItem))
            and turn.tool.type is not ToolType.COMPLETION_CHECK
        ):
            output = record.shown(turn.output)
            self._value(record, output, at)
        self._settling.append((record, output, error))  # see _settle
        self.store.finish(
            record,
            scope.stop_reason,
            summary(error, 200, preview) if error is not None else None,
            at,
        )
        if record.agent is not None and scope.stop_reason is StopReason.COMPLETED:
            self.completed += 1

    def _value(self, record: TurnRecord, text: str, at: float) -> None:
        """Count a value of ``record``'s turn, and keep ``text``, its preview."""
        agent = self.store.agents.get(record.agent) if record.agent is not None else None
        if agent is None:
            return
        self.store.add_values(record, record.values + 1)
        agent.values_tail.append(ValueEntry(at, record.tool, text))

    def _tail_stream(self, scope: Scope, record: TurnRecord, at: float | None = None) -> bool:
        output = record.turn.output if record.turn is not None else None
        if not record.streaming or not isinstance(output, list):
            return False
        seen = self._seen_values.get(scope, 0)
        total = len(output)
        if total <= seen:
            return False
        if at is None:
            at = self.clock()
        # Keep the tail bounded: only the last values matter for display, but count all.
        fresh = output[max(seen, total - 500) : total]
        skipped = total - seen - len(fresh)
        if skipped and record.agent is not None:
            self.store.add_values(record, record.values + skipped)
        for value in fresh:
            if not isinstance(value, (Turn, ContextItem)):
                self._value(record, record.shown(value), at)
        self._seen_values[scope] = total
        return True

    def _tail_streams(self) -> bool:
        changed = False
        for scope, record in list(self._open.items()):
            if self._tail_stream(scope, record):
                changed = True
        return changed

    def _event(self, event: Event, at: float) -> None:
        kind = event.type
        source = event.source
        if isinstance(source, Agent):
            name = source.name
            if kind is AgentHook.AFTER_PUT:
                turn: Turn = event["turn"]
                self._note(at, name, "put", queued(turn.tool.name))
            elif kind is AgentHook.ON_PAUSE:
                self.agent(name).hooked(kind)
                self._note(at, name, "pause", PAUSED)
            elif kind is AgentHook.ON_RESUME:
                self.agent(name).hooked(kind)
                self._note(at, name, "pause", RESUMED)
            return
        owner = event.agent.name if event.agent is not None else "—"
        if kind in (ContextPoolHook.ON_EVICT, ContextQueueHook.ON_EVICT):
            item = event["item"]
            if event.agent is not None:
                self.agent(owner).evictions += 1
            store = "pool" if kind is ContextPoolHook.ON_EVICT else "queue"
            label = item.id if getattr(item, "id", None) else preview(item.content, 30)
            self._note(at, owner, "evict", evicted(store, label))
        elif kind is ContextPoolHook.AFTER_ADD:
            self._note(at, owner, "context", added("pool", event["item"].id))
        elif kind is ContextQueueHook.AFTER_APPEND:
            self._note(
                at, owner, "context", added("queue", f"{len(event['appended_items'])} item(s)")
            )
        else:
            self._note(at, owner, "event", f"{kind.qualified}")

    # -- reading ---------------------------------------------------------------------------

    def wall_time(self, at: float) -> datetime:
        """The date (UTC) of ``at``, a time read from `clock`."""
        return datetime.fromtimestamp(self.wall_epoch + (at - self.store.epoch), UTC)

    def live_agents(self) -> list[Agent]:
        """The registered agents, by name."""
        return sorted(AgentRegistry.all(), key=lambda a: a.name)

    def counters(self, counts: dict[str, int]) -> dict[str, int]:
        """What this process's feeder counts, instead of the store's tallies of a fleet
        (``counts``): records taken and lost, turns completed (cleared agents' too),
        finished agents forgotten and spans lost."""
        counts = {
            "received": self.processed,
            "dropped": self.dropped,
            "completed": self.completed,
            "finished_dropped": self.finished.dropped,
        }
        if self.spans is not None:
            counts["spans_dropped"] = self.spans.dropped
        return {name: value for name, value in counts.items() if value}


TURNS_KEPT: Final = 200  # per agent, for the inspector

_IN_PROCESS: Final = {
    "agents": 100_000,  # the program's own agents: the registry bounds them
    "turns": 500,  # findable: the recent ones and the running ones (see `_settle`)
    "running": 1_000_000,  # the program's running turns, each alive in the program
    "recent": 500,
    "values": 500,  # value previews per agent
    "agent_turns": TURNS_KEPT,
    "service_turns": 1,  # (one service: the recent turns are its turns)
    "service_log": 1,  # (likewise, the log)
}
"""The store's bounds for a fleet of one (the others are the store's defaults)."""
