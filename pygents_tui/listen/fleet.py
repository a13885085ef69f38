"""The fleet model: what ``pygents-tui listen`` knows about every process sending to it.

Services are keyed by ``service.name`` and instance (``service.instance.id``, else
host and pid), so two processes that both run a ``planner`` stay apart; agents by
``gen_ai.agent.id`` within their service; turns by ``pygents.turn.uuid``. Live
records (the OTel events ``pygents_otel`` sends while things run) open turns, count
values and carry queue depths and context sizes; spans close turns when no record
did, and every span, pygents' own or not, goes to the trace store.

Ingestion, on the receiver's path, is an append to a byte-bounded inbox; the UI
calls `FleetModel.drain` on a timer to fold it into state, as the in-process
model does. Every store is bounded and says how much it dropped. A service that
stops sending is marked stale after ``stale_after`` seconds, never removed silently:
only the user (`FleetModel.forget_stale`) or the bound on services removes
it, and the bound counts what it evicts.

The read API is `DashboardView`'s, so the panels
that show the in-process model show this one too.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from pygents_tui.listen.decode import Batch, cut
from pygents_tui.listen.folding import Folding
from pygents_tui.listen.state import (
    AgentEntry,
    FleetLimits,
    LogEntry,
    ServiceState,
    TurnEntry,
    ValueEntry,
)
from pygents_tui.state import (
    ACTION_NEEDS,
    Action,
    Capabilities,
    ContextContents,
    DashboardView,
    Panel,
    QueuedTurn,
    Reply,
    Sources,
    TraceTree,
    bounded_context,
    bounded_queue,
    by_start,
    of_agent,
)

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

__all__ = ["CAPABILITIES", "FleetLimits", "FleetModel", "OtlpSource"]

CAPABILITIES = Capabilities(
    {
        "pause": "read-only: pygents-tui listen only receives telemetry; it cannot pause or "
        "resume remote agents (pause them in their own process)",
        "queue_contents": "queue contents are not sent over OTLP; depth only",
        "context_items": "context items are not sent over OTLP; sizes only",
        "program_output": "no program output: the services' prints are not sent over OTLP",
    }
)
"""What a fleet heard over OTLP offers: what the services send, and no control."""


class OtlpSource:
    """The OTLP receiver as a `Source`: it serves every agent it heard of, offers no
    control, and offers an agent's queue and context items once a feeder has set
    them (`FleetModel.set_contents`)."""

    def __init__(self, agents: Mapping[str, AgentEntry]) -> None:
        self._agents = agents

    def serves(self, agent: str) -> bool:
        return agent in self._agents

    def capabilities(self, agent: str | None) -> Capabilities:
        found = self._agents.get(agent) if agent is not None else None
        if found is None:
            return CAPABILITIES
        offered = CAPABILITIES
        if found.queued is not None:
            offered = offered.gains("queue_contents")
        if found.context is not None:
            offered = offered.gains("context_items")
        return offered

    def act(self, action: Action, agent: str) -> Reply:
        need = ACTION_NEEDS[action]
        return Reply(CAPABILITIES.why_not(need) or f"{need} is not offered here", True)


class FleetModel(Folding):
    """See the module docstring. ``clock`` (monotonic seconds) and ``wall`` (Unix
    nanoseconds) are injectable for deterministic tests; ``arrived`` is set by every
    ingestion, so a waiter wakes up instead of polling."""

    label_width = 24  # labels carry their service and instance
    wall_clock = None  # the senders' clocks date their records, not the listener's

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], int] = time.time_ns,
        *,
        stale_after: float = 5.0,
        limits: FleetLimits | None = None,
    ) -> None:
        super().__init__(limits if limits is not None else FleetLimits())
        self._clock = clock
        self.wall = wall
        self._epoch = clock()
        self.stale_after = stale_after
        self._version = 0
        self.arrived = asyncio.Event()
        self.last_rejection: str | None = None
        self._inbox: deque[tuple[Batch, float, int]] = deque()
        self._pending = 0
        self._second = int(self._epoch)
        # What a program sets to send here (``listen_app`` knows where it listens): the
        # empty panels say it, so that a first run shows what to do next.
        self.send_here: str | None = None
        self.sources = Sources(OtlpSource(self.agents))
        self.mailbox_stats: dict[str, MailboxStats] = {}  # by agent key, from Redis

    # -- the receiver's side: cheap, never raises --------------------------------------------

    def ingest(self, batch: Batch) -> None:
        """Queue one decoded request for the next drain. Over the byte budget, the
        oldest waiting batches are dropped (counted): fresh data matters more."""
        if batch.rejected:
            self.counts["rejected"] += batch.rejected
            self.last_rejection = f"{batch.signal}: {batch.reason}"
        if not batch.items:
            return
        self._inbox.append((batch, self._clock(), self.wall()))
        self._pending += batch.size
        while self._pending > self.limits.pending_bytes and len(self._inbox) > 1:
            old, _, _ = self._inbox.popleft()
            self._pending -= old.size
            self.counts["dropped"] += old.items
        self.arrived.set()

    def reject(self, signal: str, kind: str, reason: str) -> None:
        """A request the receiver could not accept (``kind``: ``malformed``,
        ``too_large`` or ``unsupported``): counted, never stored."""
        self.counts[kind] += 1
        self.last_rejection = f"{signal}: {cut(reason, 200)}"
        self.arrived.set()

    # -- folding, on the UI's timer ------------------------------------------------------------

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    @property
    def epoch(self) -> float:
        return self._epoch

    @property
    def version(self) -> int:
        return self._version

    def drain(self) -> bool:
        """Fold everything that arrived, then update staleness and rates. True if
        anything changed since the last call."""
        inbox = self._inbox
        changed = bool(inbox)
        while inbox:
            batch, mono, wall = inbox.popleft()
            self._pending -= batch.size
            self.fold_batch(batch, mono, wall)
        now = self._clock()
        if self._check_stale(now):
            changed = True
        second = int(now)
        if second != self._second:
            self._second = second
            for agent in self.agents.values():
                agent.rate.roll(now)
            changed = True
        if changed:
            self._version += 1
        self.arrived.clear()
        return changed

    def _check_stale(self, now: float) -> bool:
        changed = False
        for service in self.services.values():
            if service.ended or service.stale:
                continue  # an ended process says nothing more, and is not stale for it
            if now - service.last_seen > self.stale_after:
                service.stale = True
                self.note(service, now, service.label, "stale", "stopped sending")
                changed = True
        return changed

    def forget_stale(self) -> int:
        """Remove every stale service with its agents and turns (the user's action);
        how many were removed."""
        stale = [s for s in self.services.values() if s.stale]
        for service in stale:
            self.remove_service(service)
        if stale:
            self._version += 1
        return len(stale)

    # -- reading: the DashboardView protocol ---------------------------------------------------

    def agent_rows(self) -> list[AgentEntry]:
        return sorted(self.agents.values(), key=lambda a: (a.service.label, a.name, a.key))

    def running_turns(self, agent: str | None = None) -> list[TurnEntry]:
        return by_start(self.running.values(), agent)

    def recent_turns(self, agent: str | None = None) -> list[TurnEntry]:
        return of_agent(self.recent, agent)

    def value_tail(self, agent: str) -> tuple[int, list[ValueEntry]]:
        found = self.agents.get(agent)
        if found is None:
            return 0, []
        return found.values_tail.total, list(found.values_tail)

    def event_log(self) -> tuple[int, list[LogEntry]]:
        return self.log.total, list(self.log)

    def find_turn(self, key: str) -> TurnEntry | None:
        """By key, else by uuid (the newest turn with it)."""
        found = self.turns.get(key)
        if found is not None:
            return found
        for turn in reversed(self.turns.values()):
            if turn.uuid == key:
                return turn
        return None

    def trace_tree(self, trace_id: str) -> TraceTree | None:
        return self.traces.tree(trace_id)

    def unavailable(self, panel: Panel, agent: str | None = None) -> str | None:
        note = self.sources.of(agent).panel_note(panel)
        if note is not None:
            return note
        if panel == "values" and not self.previews_seen:
            return "values are counted; previews are sent only with content capture on"
        if panel in ("agents", "running", "events", "timeline") and not self.services:
            how = self.send_here or "point a program's OTLP exporter here"
            return f"nothing received yet: {how}, with pygents_otel.configure(live=True)"
        if panel in ("agents", "running"):
            return self._spans_only()
        return None

    def _spans_only(self) -> str | None:
        """Which services sent no live record yet, per service: one that sends them
        must not hide another whose running agents show as idle for want of them."""
        quiet = sorted(s.label for s in self.services.values() if not s.live)
        if not quiet:
            return None
        effect = "turns show when their spans end (turn live mode on)"
        if len(quiet) == len(self.services):
            return f"no live records yet: {effect}"
        named = ", ".join(quiet[:3]) + (f" and {len(quiet) - 3} more" if len(quiet) > 3 else "")
        return f"no live records yet from {named}: its {effect}"

    def counters(self) -> dict[str, int]:
        counts = dict(self.counts)
        counts["services"] = len(self.services)
        counts["stale"] = sum(1 for s in self.services.values() if s.stale)
        counts["ended"] = sum(1 for s in self.services.values() if s.ended)
        counts["traces_evicted"] = self.traces.evicted
        counts["trace_spans_dropped"] = self.traces.dropped
        counts["log_dropped"] = self.log.dropped
        counts["pending"] = sum(b.items for b, _, _ in self._inbox)
        return {name: value for name, value in counts.items() if value}

    # -- what a fleet does not offer, or has nothing of ---------------------------------------

    def start(self) -> None:
        """Nothing to start: the receiver feeds the model (``ingest``) as requests arrive."""

    def close(self) -> None:
        """Nothing to let go of: the receiver is closed by whoever started it."""

    def set_contents(
        self,
        agent: str,
        queued: Iterable[QueuedTurn] | None = None,
        more: int = 0,
        context: ContextContents | None = None,
    ) -> bool:
        """What a feeder that reaches into an agent's process says its queue holds
        (the first waiting turns as ``(position, tool, arguments, timeout)``, and how
        many more wait) and its context's items; ``None`` leaves that part as it was.
        From then on the agent is offered them. Bounded like the in-process source's
        (`bounded_queue`, `bounded_context`): they come from the network. False if no
        agent has key ``agent``."""
        found = self.agents.get(agent)
        if found is None:
            return False
        if queued is not None:
            found.queued, found.queued_more = bounded_queue(queued, more)
        if context is not None:
            found.context = bounded_context(context)
        self._version += 1
        return True

    def queued_turns(self, agent: str) -> list[tuple[str, str, str, str]]:
        """The waiting turns a feeder set (`set_contents`); none otherwise (a sender's
        telemetry reports the depth only)."""
        found = self.agents.get(agent)
        if found is None or found.queued is None:
            return []
        rows = list(found.queued)
        if found.queued_more:
            rows.append(("…", f"{found.queued_more} more", "", ""))
        return rows

    def context_contents(self, agent: str) -> ContextContents | None:
        """The context items a feeder set (`set_contents`); ``None`` otherwise."""
        found = self.agents.get(agent)
        return found.context if found is not None else None

    def mailboxes(self) -> Mapping[str, MailboxStats]:
        # Not sent over OTLP: set by a feeder that reads them (listen --redis).
        return self.mailbox_stats

    def finished_count(self) -> int:
        """The agents of processes that said goodbye (one that just stops sending
        keeps its agents, marked stale: see `forget_stale`)."""
        return sum(len(s.agents) for s in self.services.values() if s.ended)

    def clear_finished(self) -> int:
        """Remove every process that said goodbye, with its agents and turns; how many
        agents went."""
        ended = [s for s in self.services.values() if s.ended]
        count = sum(len(s.agents) for s in ended)
        for service in ended:
            self.remove_service(service)
        if ended:
            self._version += 1
        return count

    # -- the fleet's own views ---------------------------------------------------------------

    def turn_trace(self, key: str) -> TraceTree | None:
        """The trace of a turn (by key or uuid), if any of its spans arrived."""
        turn = self.find_turn(key)
        return self.traces.tree(turn.trace_id) if turn is not None and turn.trace_id else None

    def service_rows(self) -> list[ServiceState]:
        return sorted(self.services.values(), key=lambda s: s.label)


# The fleet model is a DashboardView (checked by mypy, free at run time).
_VIEW: type[DashboardView] = FleetModel
