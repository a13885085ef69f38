"""The in-process feeder: this process's runtime written into the dashboard's one
store (`pygents_tui.state.Store`) as a fleet of one, and no UI.

It is fed by the core's subscription seam at almost no cost to the agents: it follows
scopes (agent runs and turns) and *cold* hook events only — puts, pauses, errors,
timeouts, context changes — so every per-turn path of the runtime stays on its fast
track. Ingestion is one ``deque.append`` and a count. The feeder makes the store it
writes (``model.store``, what the app reads) and is its `Feeder`: the store's
``drain``, called by the UI on a timer, asks it to fold the records into the store's
agents, turns, rings and counters, through the same writes the OTLP feeder makes.
Live state (queue depth, current turn, context sizes, a stream's values so far) is
read from the agents themselves on every drain, and their queued turns and context
items when a panel asks (helpers in `pygents_tui.feeders.process.local`).
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast

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
    subscribe,
)
from pygents_tui.feeders.process._agents import THROUGHPUT_SECONDS, AgentState, FinishedAgents
from pygents_tui.feeders.process._mailboxes import served_stats
from pygents_tui.feeders.process._turn_entries import LogEntry, TurnDetails, TurnRecord, ValueRecord
from pygents_tui.feeders.process.local import (
    NO_SDK,
    ProcessTraces,
    SpanSource,
    ThisProcess,
    arguments,
    detached_turns,
    phase_of,
    program,
    spans_module,
)
from pygents_tui.state import (
    PAUSED,
    POOL_SHOWN,
    QUEUE_SHOWN,
    RESUMED,
    RUN_STARTED,
    AgentEntry,
    Capacity,
    ContextContents,
    Feeder,
    Panel,
    Sources,
    Store,
    StoreLimits,
    TurnEntry,
    ValueEntry,
    added,
    evicted,
    queued,
    turn_started,
)
from pygents_tui.text._cut import cut
from pygents_tui.text._errors import summary
from pygents_tui.text._preview import preview

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

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


class DashboardModel(Feeder, Subscriber):
    """See the module docstring. The store has one service (this program) with one
    instance (this process), its agents labelled by their bare names; on every drain
    (`refresh_live`) each registered agent gets a row with its phase, queue depth,
    current turn and context sizes, and those that left are marked finished
    (`FinishedAgents`).

    ``tracer_provider``: the provider whose spans the trace view shows (``None``: the
    global one, looked for until an SDK installs one). ``clock`` (monotonic seconds)
    times everything the model records; ``wall_clock``
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
        limits = StoreLimits(log=max_log, **_IN_PROCESS)
        # The store this feeder writes (what the app reads): its labels are the
        # agents' own names, and a process of one never goes stale.
        self.store = Store(limits, ProcessTraces(self), clock, stale_after=math.inf)
        self.store.label_width = 10
        self.store.feeder = self
        self.clock = clock
        self.process = self.store.add_service(
            program(), f"pid {os.getpid()}", label=program(), at=self.store.epoch, pid=os.getpid()
        )
        self.process.bare = True
        self.finished = FinishedAgents(max_finished)  # of the store's agents, those that left
        self.store.sources = Sources(ThisProcess())
        self.spans: SpanSource | None = None
        self._subscription: Any = None
        self._closed = False
        self._find_provider: Callable[[], object] | None = None
        self.trace_with(tracer_provider)
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

    def fold(self, budget: float | None = None) -> bool:
        """Process every pending record, then tail running streams and read the live
        agents (the store's `drain` calls this first). True if anything changed.
        (``budget`` is not needed: an in-process workload is folded whole.) Once
        closed, nothing: the store keeps what the dashboard ended on."""
        if self._closed:
            return False
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
        started = turn_started(record.tool)
        record.happened(LogEntry(at, record.agent_label, "turn", started))
        if agent is not None:
            self._note(at, agent.label, "turn", started)

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
            returned = f"returned {cut(output, _EVENT_TEXT)}"
            record.happened(LogEntry(at, record.agent_label, "value", returned))
        self._settling.append((record, output, error))  # see _settle
        why = summary(error, 200, preview) if error is not None else None
        record.ending = LogEntry(at, record.agent_label, "turn", _ended(scope.stop_reason, why))
        self.store.finish(record, scope.stop_reason, why, at)
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
        before = record.values
        if skipped and record.agent is not None:
            self.store.add_values(record, record.values + skipped)
        last: str | None = None
        for value in fresh:
            if not isinstance(value, (Turn, ContextItem)):
                last = record.shown(value)
                self._value(record, last, at)
        self._seen_values[scope] = total
        if record.values > before:  # one line for the values this read found
            text = _values_read(before, record.values, last)
            record.happened(LogEntry(at, record.agent_label, "value", text), value=True)
        return True

    def _tail_streams(self) -> bool:
        changed = False
        for scope, record in list(self._open.items()):
            if self._tail_stream(scope, record):
                changed = True
        return changed

    def _event(self, event: Event, at: float) -> None:
        """Log ``event``, and keep it with the turn it fired in, if any."""
        noted = self._noted(event)
        if noted is None:
            return
        who, kind, text = noted
        self._note(at, who, kind, text)
        scope = event.scope
        while scope is not None and scope.kind is not _TURN:
            scope = scope.parent
        record = self._open.get(scope) if scope is not None else None
        if record is not None:
            record.happened(LogEntry(at, who, kind, text))

    def _noted(self, event: Event) -> tuple[str, str, str] | None:
        """The event log's line for ``event`` (whose, kind, text), if it has one; what
        an agent's event says of its phase and evictions is taken on the way."""
        kind = event.type
        source = event.source
        if isinstance(source, Agent):
            name = source.name
            if kind is AgentHook.AFTER_PUT:
                turn: Turn = event["turn"]
                return name, "put", queued(turn.tool.name)
            if kind is AgentHook.ON_PAUSE:
                self.agent(name).hooked(kind)
                return name, "pause", PAUSED
            if kind is AgentHook.ON_RESUME:
                self.agent(name).hooked(kind)
                return name, "pause", RESUMED
            return None
        owner = event.agent.name if event.agent is not None else "—"
        if kind in (ContextPoolHook.ON_EVICT, ContextQueueHook.ON_EVICT):
            item = event["item"]
            if event.agent is not None:
                self.agent(owner).evictions += 1
            store = "pool" if kind is ContextPoolHook.ON_EVICT else "queue"
            label = item.id if getattr(item, "id", None) else preview(item.content, 30)
            return owner, "evict", evicted(store, label)
        if kind is ContextPoolHook.AFTER_ADD:
            return owner, "context", added("pool", event["item"].id)
        if kind is ContextQueueHook.AFTER_APPEND:
            return owner, "context", added("queue", f"{len(event['appended_items'])} item(s)")
        return owner, "event", f"{kind.qualified}"

    # -- this process's registry and spans, read on every drain ---------------------------

    def trace_with(self, tracer_provider: object | None) -> None:
        """Show the spans of ``tracer_provider`` (``None``: the global provider's),
        instead of those shown so far."""
        if self.spans is not None:
            self.spans.close()  # (its provider keeps it, closed: it ignores spans)
            self.spans = None
        spans = spans_module()
        if spans is not None:
            given = tracer_provider is not None
            self._find_provider = (lambda: tracer_provider) if given else spans.global_provider
            self._watch_provider()

    def _watch_provider(self) -> None:
        """Register on the SDK's provider once there is one. The program may configure
        its SDK after the dashboard started: looked for again at every drain until found
        (an attribute read and an isinstance check)."""
        spans = spans_module()
        if self._find_provider is None or spans is None:
            return
        capture: SpanSource | None = spans.attach(self._find_provider())
        if capture is not None:
            self.spans = capture
            self._find_provider = None

    def agent(self, name: str) -> AgentEntry:
        """The agent of this process named ``name``, made on first sight."""
        found = self.store.agents.get(name)
        if found is None:
            found = self.store.new_agent(self.process, name, name, name, name)
        return found

    def start(self) -> None:
        """Subscribe the feeder to this process's runtime."""
        self._closed = False
        if self._subscription is None:
            self._subscription = subscribe(cast("Subscriber", self))

    def close(self) -> None:
        self._closed = True
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        if self.spans is not None:
            self.spans.close()
        self._find_provider = None

    # -- what only live agents say, read on every drain -------------------------------------

    def refresh_live(self, now: float) -> bool:
        """Give every registered agent a row with its live state, and mark those that
        left the registry finished. True if the list of agents changed."""
        changed = False
        detached = detached_turns(self.store.running.values())
        served = served_stats()  # the agents a pygents.redis Worker here serves now
        for found in AgentRegistry.all():
            entry = self.store.agents.get(found.name)
            if entry is None:
                entry = self.agent(found.name)
                changed = True
            queue, pool = found.context_queue, found.context_pool
            current = found.current_turn
            entry.live_phase = phase_of(found, entry.phase)
            entry.queue_depth = found.queue_depth
            entry.current_tool = current.tool.name if current is not None else None
            entry.current_turn = current.uuid if current is not None else None
            running = detached.get(entry.key) if current is None else None
            if running:  # turns run outside its run() loop: a pygents.redis Worker's
                oldest = running[0]
                more = f" +{len(running) - 1}" if len(running) > 1 else ""
                entry.current_tool, entry.current_turn = oldest.tool + more, oldest.uuid
                if entry.live_phase != "paused":
                    entry.live_phase = "running"
            elif found.name in served and entry.live_phase in _RUN_ENDED:
                # Each of a worker's turns runs in an agent run of its own, whose end
                # says done (or failed); the worker serves on, waiting for the next.
                entry.live_phase = "idle"
            entry.context_queue = Capacity(len(queue), queue.limit)
            entry.context_pool = Capacity(len(pool), pool.limit)
        if self.finished.follow(self.store, AgentRegistry.__contains__, now):
            changed = True
            for entry in self.finished:  # its queue, turn and context went with it
                entry.queue_depth = entry.current_tool = entry.current_turn = None
                entry.live_phase = None
                entry.context_queue = entry.context_pool = None
        return changed

    def phase(self, agent: Agent) -> str:
        """What registered ``agent`` is doing now (its row's state)."""
        found = self.store.agents.get(agent.name)
        return phase_of(agent, found.phase if found is not None else "idle")

    def finished_agents(self) -> list[AgentEntry]:
        """The agents that have left the registry, oldest first."""
        return list(self.finished)

    def cleared(self) -> None:
        self.finished.clear()

    def queued_turns(self, agent: str) -> list[tuple[str, str, str, str]]:
        found = AgentRegistry.find(agent)
        if found is None:
            return []
        return [
            (str(position), turn.tool.name, arguments(turn), f"{turn.timeout:g}s")
            for position, turn in enumerate(islice(found, QUEUE_SHOWN), start=1)
        ]

    def context_contents(self, agent: str) -> ContextContents | None:
        found = AgentRegistry.find(agent)
        if found is None:
            return None
        queue, pool = found.context_queue, found.context_pool
        return ContextContents(
            queue=Capacity(len(queue), queue.limit),
            queue_items=tuple(preview(item.content, 70) for item in queue.items),
            pool=Capacity(len(pool), pool.limit),
            pool_items=tuple(
                (preview(item.id, 14), preview(item.description, 40), preview(item.content, 40))
                for item in pool.items[-POOL_SHOWN:]
            ),
        )

    def mailboxes(self, stats: Mapping[str, MailboxStats]) -> Mapping[str, MailboxStats]:
        return served_stats()

    # -- this process's spans ------------------------------------------------------------------

    @property
    def revision(self) -> int:
        return self.spans.version if self.spans is not None else 0

    def drain_spans(self) -> bool:
        if self.spans is None:
            self._watch_provider()
        return self.spans is not None and self.spans.drain(self.store.span_arrived)

    def trace_of(self, turn: TurnEntry) -> str | None:
        """The trace of ``turn``, learned from its span if there was no way to ask for
        it when the turn started."""
        if turn.trace_id is None and self.spans is not None:
            turn.trace_id = self.spans.trace_of(turn.uuid)
        return turn.trace_id

    def unavailable(self, panel: Panel, agent: str | None, note: str | None) -> str | None:
        if panel == "trace" and self.spans is None:
            return NO_SDK
        return note

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


_EVENT_TEXT: Final = 80  # a value's preview in a turn's timeline (the inspector cuts to 100)


def _values_read(before: int, now: int, last: str | None) -> str:
    """A stream's values read at one refresh, the ``before + 1``-th to the
    ``now``-th, as its timeline in the inspector says them; ``last``: the last one's
    preview."""
    which = f"value {now}" if now == before + 1 else f"values {before + 1}–{now}"
    if last is None:
        return which
    last = cut(last, _EVENT_TEXT)
    return f"{which}: {last}" if now == before + 1 else f"{which}, the last: {last}"


def _ended(reason: StopReason | None, why: str | None) -> str:
    """A turn's end, as its timeline in the inspector says it (`TurnRecord.ending`)."""
    if reason is StopReason.COMPLETED:
        return "✔ completed"
    if reason is StopReason.TIMEOUT:
        return "◷ timed out"
    if reason is StopReason.CANCELLED:
        return "⊘ cancelled"
    return f"✖ failed: {why}" if why else "✖ failed"


TURNS_KEPT: Final = 200  # per agent, for the inspector
_RUN_ENDED: Final = frozenset(("finished", "failed"))  # phases only a run's end leaves

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
