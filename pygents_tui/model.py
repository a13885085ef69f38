"""The dashboard's model: everything the screen shows, and no UI.

It is fed by the core's subscription seam at almost no cost to the agents: it follows
scopes (agent runs and turns) and *cold* hook events only — puts, pauses, errors,
timeouts, context changes — so every per-turn path of the runtime stays on its fast
track. Ingestion is one ``deque.append`` and a count;
[`DashboardModel.drain`][pygents_tui.DashboardModel.drain],
called by the UI on a timer, turns the records into per-agent state, bounded ring
buffers and counters. Live state (queue depth, current turn, context sizes, a stream's values so
far) is read from the agents themselves at refresh time.
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
from pygents_tui._agents import THROUGHPUT_SECONDS, TURNS_KEPT, AgentState, FinishedAgents
from pygents_tui._errors import summary
from pygents_tui._preview import preview
from pygents_tui._records import LogEntry, TurnDetails, TurnRecord, ValueRecord
from pygents_tui.state import (
    PAUSED,
    RESUMED,
    RUN_STARTED,
    Ring,
    ValueEntry,
    added,
    by_start,
    evicted,
    queued,
    turn_started,
)

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


class DashboardModel(Subscriber):
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
    ) -> None:
        self.clock = clock
        self.epoch = clock()  # times are shown as seconds since the dashboard started
        self.wall_epoch = wall_clock()  # ... and as dates, this one being ``epoch``
        self.inbox: deque[tuple[int, Any, float, str | None]] = deque(maxlen=max_inbox)
        self.received = 0
        self.processed = 0
        self.agents: dict[str, AgentState] = {}
        self.finished = FinishedAgents(max_finished)  # of `agents`, those that left
        self.completed = 0  # turns completed, by every agent, cleared or not
        self.running: dict[Scope, TurnRecord] = {}
        self.recent: deque[TurnRecord] = deque(maxlen=500)
        self.log: Ring[LogEntry] = Ring(max_log)
        self.version = 0  # bumped by every drain that changed something
        self.trace_id = trace_id
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
        return self.log.total

    @property
    def dropped(self) -> int:
        """Records lost because the inbox overflowed before a drain."""
        return self.received - self.processed - len(self.inbox)

    def agent(self, name: str) -> AgentState:
        state = self.agents.get(name)
        if state is None:
            state = self.agents[name] = AgentState(name)
        return state

    def drain(self) -> bool:
        """Process every pending record, then tail running streams. True if anything
        changed since the last call."""
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
        now = self.clock()
        if self._roll_throughput(int(now)):
            changed = True
        if self.finished.follow(self.agents, AgentRegistry.__contains__, now):
            changed = True
        if changed:
            self.version += 1
        return changed

    def _settle(self) -> None:
        """Previews for the turns that ended in this drain and are still kept; then
        every one of them lets go of its turn (its output and values are the program's
        to free).

        Done once per drain, newest first, rather than as each turn ends: in a busy drain
        most ended turns are already pushed out of the bounded rings, and previews built
        for them would be thrown away unseen.
        """
        settling = self._settling
        recent_left = self.recent.maxlen or 0
        agent_left: dict[str, int] = {}
        for record, output, error in reversed(settling):
            kept = recent_left > 0
            recent_left -= 1
            if record.agent is not None:
                left = agent_left.get(record.agent, TURNS_KEPT)
                kept = kept or left > 0
                agent_left[record.agent] = left - 1
            turn = record.turn
            if turn is not None:
                details = TurnDetails.of(turn, record.streaming, output, error) if kept else None
                record.let_go(details)
        settling.clear()

    def _roll_throughput(self, second: int) -> bool:
        """Quiet seconds count as zero: move every agent's buckets up to now."""
        rolled = False
        for state in self.agents.values():
            if state.rate.roll(second):
                rolled = True
        return rolled

    def _note(self, at: float, agent: str, kind: str, text: str) -> None:
        self.log.append(LogEntry(at, agent, kind, text))

    def _started(self, scope: Scope, at: float, trace: str | None = None) -> None:
        if scope.kind is ScopeKind.AGENT_RUN:
            state = self.agent(scope.target.name)
            state.phase = "running"
            self._note(at, state.name, "run", RUN_STARTED)
            return
        turn: Turn = scope.target
        agent = scope.agent.name if scope.agent is not None else None
        record = TurnRecord(
            turn=turn,
            agent=agent,
            tool=turn.tool.name,
            started=at,
            timeout=float(turn.timeout),
            streaming=turn.tool.streaming,
            trace_id=trace,
        )
        self.running[scope] = record
        if agent is not None:
            self._note(at, agent, "turn", turn_started(record.tool))

    def _ended(self, scope: Scope, at: float) -> None:
        if scope.kind is ScopeKind.AGENT_RUN:
            state = self.agent(scope.target.name)
            text = state.run_ended(scope.stop_reason)
            if scope.error is not None and isinstance(scope.error, Exception):
                state.last_error = summary(scope.error, 120, preview)
            self._note(at, state.name, "run", text)
            return
        record = self.running.pop(scope, None)
        if record is None:
            return
        self._tail_stream(scope, record, at)
        self._seen_values.pop(scope, None)
        error = scope.error if scope.stop_reason is not StopReason.COMPLETED else None
        record.end(
            scope.stop_reason, at, summary(error, 200, preview) if error is not None else None
        )
        turn: Turn = scope.target
        output = None  # its preview, made here only when the values tail needs it
        if (
            not record.streaming
            and not record.error
            and scope.stop_reason is StopReason.COMPLETED
            and record.agent is not None
            and not isinstance(turn.output, (Turn, ContextItem))
            and turn.tool.type is not ToolType.COMPLETION_CHECK
        ):
            output = record.shown(turn.output)
            self._value(record, output, at)
        self._settling.append((record, output, error))  # see _settle
        self.recent.append(record)
        if record.agent is None:
            return
        state = self.agent(record.agent)
        state.turns.append(record)
        if scope.stop_reason is StopReason.COMPLETED:
            self.completed += 1
        kind, text = state.turn_ended(record)
        self._note(at, state.name, kind, text)

    def _value(self, record: TurnRecord, text: str, at: float) -> None:
        """Count a value of ``record``'s turn, and keep ``text``, its preview."""
        if record.agent is None:
            return
        state = self.agent(record.agent)
        state.values += 1
        record.values += 1
        state.values_tail.append(ValueEntry(at, record.tool, text))

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
            state = self.agent(record.agent)
            state.values += skipped
            record.values += skipped
        for value in fresh:
            if not isinstance(value, (Turn, ContextItem)):
                self._value(record, record.shown(value), at)
        self._seen_values[scope] = total
        return True

    def _tail_streams(self) -> bool:
        changed = False
        for scope, record in list(self.running.items()):
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
                self.agent(name).phase = "paused"
                self._note(at, name, "pause", PAUSED)
            elif kind is AgentHook.ON_RESUME:
                self.agent(name).phase = "running"
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

    # -- reading, for the widgets -----------------------------------------------------------

    def wall_time(self, at: float) -> datetime:
        """The date (UTC) of ``at``, a time read from `clock`."""
        return datetime.fromtimestamp(self.wall_epoch + (at - self.epoch), UTC)

    def live_agents(self) -> list[Agent]:
        """The registered agents, by name."""
        return sorted(AgentRegistry.all(), key=lambda a: a.name)

    def finished_agents(self) -> list[AgentState]:
        """The agents that have left the registry (their states), oldest first."""
        return list(self.finished)

    def clear_finished(self) -> int:
        """Forget the finished agents; how many there were."""
        count = self.finished.clear(self.agents)
        if count:
            self.version += 1
        return count

    def phase(self, agent: Agent) -> str:
        state = self.agents.get(agent.name)
        if agent.is_paused:
            return "paused"
        if agent.is_running:
            return "running"
        return state.phase if state is not None and state.phase != "running" else "idle"

    def running_turns(self, agent: str | None = None) -> list[TurnRecord]:
        return by_start(self.running.values(), agent)

    def find_turn(self, uuid: str) -> TurnRecord | None:
        for record in (*self.running.values(), *reversed(self.recent)):
            if record.uuid == uuid:
                return record
        return None
