"""The dashboard's one store: services → instances → agents → turns, their values,
the event log and the contents feeders set, bounded, with the read API every panel
uses (`DashboardView`).

Feeders write into it: the OTLP receiver (``pygents_tui.listen``, which makes one
`ServiceState` per process it hears of), and a recording replayed through that
receiver's feeder. Whatever wrote a row, it is read here one way. The store itself
knows nothing of where its rows came from: what each agent is offered, and how an
action reaches it, is asked of the feeders' sources (``sources``).

A service that stops sending is marked stale after ``stale_after`` seconds, never
removed silently: only the user (`Store.forget_stale`) or the bound on services
removes it, and the bound counts what it evicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from pygents_tui.state._attention import Attention
from pygents_tui.state._contents import QueuedTurn, bounded_context, bounded_queue
from pygents_tui.state._entries import (
    AgentEntry,
    LogEntry,
    ServiceState,
    StoreLimits,
    TurnEntry,
    ValueEntry,
)
from pygents_tui.state._sources import Sources
from pygents_tui.state._stuck import Stuck
from pygents_tui.state._tables import Tables, Traces
from pygents_tui.state._tokens import CallUsage
from pygents_tui.state._turns import by_start, of_agent
from pygents_tui.state._usage import BudgetPassed, SpanUsage, Usage
from pygents_tui.state._view import ContextContents, DashboardView, Panel, TraceTree

if TYPE_CHECKING:
    from datetime import datetime

    from pygents.redis import MailboxStats
    from pygents_tui.state._prices import Meters

__all__ = ["SPANS_ONLY_STALE_AFTER", "Feeder", "Store"]

SPANS_ONLY_STALE_AFTER: Final = 60.0
"""Seconds of silence before another framework's service is stale, when that is
longer than ``stale_after``: such a sender sends a span when a step ends and nothing
between (no heartbeat, unlike pygents' live records), so a model call of half a
minute is silence, not a process gone."""


class Feeder:
    """What a store asks of the feeder that writes into it (`Store.feeder`), with what
    a feeder that has nothing to add answers. A feeder holds its store; the store
    asks it, on each drain, to fold what it queued (`fold`), and on each read to add
    what only it knows: a panel's note, the counters, an agent's queue and context
    items read from where they live, the trace of a turn, a version for what changes
    between drains. Subclass it for those defaults (as `pygents.Subscriber` is)."""

    @property
    def revision(self) -> int:
        """What changed outside the store, between drains (spans a panel shows)."""
        return 0

    def start(self) -> None:
        """The dashboard starts reading: subscribe to what feeds the store."""

    def close(self) -> None:
        """The dashboard closed the store: let go of what it reads from."""

    def fold(self, budget: float | None = None) -> bool:
        """Fold what was queued since the last drain; True if there was any. With a
        ``budget`` (seconds), a feeder may stop once it is spent and fold the rest
        later (`backlog`)."""
        return False

    @property
    def backlog(self) -> bool:
        """Whether a fold with a budget left something queued."""
        return False

    def unavailable(self, panel: Panel, agent: str | None, note: str | None) -> str | None:
        """``panel``'s note, given the store's (``note``)."""
        return note

    def counters(self, counts: dict[str, int]) -> Mapping[str, int]:
        """The status line's counters, given the store's (``counts``)."""
        return counts

    def forgot(self, service: ServiceState) -> None:
        """The store removed ``service`` (a cache may hold it)."""

    def cleared(self) -> None:
        """The store removed its finished agents (the user's ``c``)."""

    def trace_of(self, turn: TurnEntry) -> str | None:
        """The trace id of ``turn``, when it arrived without one."""
        return turn.trace_id

    def queued_turns(self, agent: str) -> list[tuple[str, str, str, str]] | None:
        """``agent``'s waiting turns read where they wait; ``None``: the store's."""
        return None

    def context_contents(self, agent: str) -> ContextContents | None:
        """``agent``'s context items read where they live; ``None``: the store's."""
        return None

    def mailboxes(self, stats: Mapping[str, MailboxStats]) -> Mapping[str, MailboxStats]:
        """The mailbox statistics by agent key, given the store's."""
        return stats


_UNFED = Feeder()


class Store(Tables):
    """See the module docstring. ``clock`` (monotonic seconds) times everything; the
    feeder that makes the store sets ``sources`` (its own first)."""

    label_width: int = 24  # labels carry their service and instance
    wall_clock: Callable[[float], datetime] | None = None  # (see `DashboardView`)
    sources: Sources

    def __init__(
        self,
        limits: StoreLimits,
        traces: Traces,
        clock: Callable[[], float],
        *,
        stale_after: float = 5.0,
    ) -> None:
        super().__init__(limits, traces)
        self._clock = clock
        # Times are shown as seconds since this (a replay sets the recording's start).
        self.epoch = clock()
        self.stale_after = stale_after
        self._version = 0
        self._unsettled = False  # folded since the last drain (between drains: `fold`)
        self._second = int(self.epoch)
        self._meters: Meters | None = None
        # By agent key: set by a feeder that reads pygents.redis mailboxes (listen --redis).
        self.mailbox_stats: dict[str, MailboxStats] = {}
        self.attention = Attention(clock, self._name_of, limits)
        self._rows: tuple[int, tuple[AgentEntry, ...]] = (-1, ())  # (rows_version, rows)
        # The feeder that writes into this store (`Feeder`): asked to fold on each
        # drain and to add what only it knows on each read. Feeders that write at once
        # and know nothing more (Redis, beside the OTLP feeder) need none.
        self.feeder: Feeder = _UNFED

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    @property
    def version(self) -> int:
        return self._version + self.feeder.revision

    def changed(self) -> None:
        """Something a reader shows changed outside a drain (a user's action, a feeder
        setting contents)."""
        self._version += 1

    def fold(self, budget: float | None = None) -> bool:
        """Fold what the feeder queued since the last drain, within ``budget`` seconds
        if one is given (the feeder's `Feeder.backlog` then says whether anything is
        left); True if there was any. (A store without a queueing feeder has nothing
        to fold.) What is folded between drains is shown after the next one."""
        folded = self.feeder.fold(budget)
        self._unsettled = self._unsettled or folded
        return folded

    @property
    def backlog(self) -> bool:
        """Whether the feeder has something left to fold (a fold's budget ran out)."""
        return self.feeder.backlog

    def drain(self, budget: float | None = None) -> bool:
        """Fold what arrived (`fold`, within ``budget``), then update staleness and
        rates. True if anything changed since the last call."""
        self.fold(budget)
        changed, self._unsettled = self._unsettled, False
        return self.settle(changed)

    def settle(self, changed: bool) -> bool:
        """After what arrived was folded (``changed``: anything was): update
        staleness and rates, and bump the version if anything changed."""
        now = self._clock()
        if self._check_stale(now):
            changed = True
        if self.attention.settle(self.running.values(), now, self.trace_of, self.mailboxes):
            changed = True
        second = int(now)
        if second != self._second:
            self._second = second
            for agent in self.agents.values():
                agent.rate.roll(now)
            changed = True
        if changed:
            self._version += 1
        return changed

    def turn_ended(self, turn: TurnEntry) -> None:
        self.attention.ended(turn)

    def span_arrived(self, span: SpanUsage) -> None:
        """Every span a feeder received or captured: its model usage is counted."""
        self.attention.span(span)

    def _name_of(self, key: str) -> str:
        agent = self.agents.get(key)
        return agent.name if agent is not None else key

    def trace_of(self, turn: TurnEntry) -> str | None:
        """The trace id of ``turn``, learned from the feeder when it arrived without
        one (in-process: from its span, once the capture saw it start)."""
        return turn.trace_id if turn.trace_id is not None else self.feeder.trace_of(turn)

    def configure_meters(self, meters: Meters) -> None:
        """The configuration's price table, budgets and stuck-work thresholds,
        applied before anything arrives (and again after a `reset`)."""
        self._meters = meters
        self.attention.configure(meters)

    def reset(self, traces: Traces) -> None:
        """Empty the store for a feeder that starts again from nothing (a replay's
        seek): every row, turn, log line, count and tally goes, and ``traces``
        replaces the trace store. What was configured stays (bounds, meters, clock,
        epoch, sources, feeder), and the versions only grow, so a reader that
        remembers one sees the change."""
        rows_version = self.rows_version
        Tables.__init__(self, self.limits, traces)
        self._rows_version = rows_version + 1
        self._rows = (-1, ())
        self.mailbox_stats = {}
        self.attention = Attention(self._clock, self._name_of, self.limits)
        if self._meters is not None:
            self.attention.configure(self._meters)
        self._version += 1

    def _check_stale(self, now: float) -> bool:
        changed = False
        quiet = max(self.stale_after, SPANS_ONLY_STALE_AFTER)
        for service in self.services.values():
            if service.ended or service.stale:
                continue  # an ended process says nothing more, and is not stale for it
            after = self.stale_after if service.framework is None else quiet
            if now - service.last_seen > after:
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

    def start(self) -> None:
        """The dashboard starts reading: the feeder subscribes (in-process)."""
        self.feeder.start()

    def close(self) -> None:
        """Let the feeder go of what it reads from (a replay's file, a subscription);
        a receiver is stopped by whoever started it."""
        self.feeder.close()

    def agent_rows(self) -> list[AgentEntry]:
        """By service and name; those that left while their process lives on after
        the others, in the order they left. Sorted once per `rows_version`: panels
        read them several times a refresh, and with thousands of agents each sort
        cost milliseconds (a copy of the sorted rows costs microseconds)."""
        version, rows = self._rows
        if version != self.rows_version:
            rows = tuple(sorted(self.agents.values(), key=_row_order))
            self._rows = (self.rows_version, rows)
        return list(rows)

    def agent_row(self, key: str) -> AgentEntry | None:
        return self.agents.get(key)

    def running_turns(self, agent: str | None = None) -> list[TurnEntry]:
        return by_start(self.running.values(), agent)

    def recent_turns(self, agent: str | None = None) -> Sequence[TurnEntry]:
        recent = self.recent.items
        return recent if agent is None else of_agent(recent, agent)  # no copy of them all

    def value_tail(self, agent: str) -> tuple[int, list[ValueEntry]]:
        found = self.agents.get(agent)
        if found is None:
            return 0, []
        return found.values_tail.total, list(found.values_tail)

    def event_log(self) -> tuple[int, Sequence[LogEntry]]:
        return self.log.total, self.log.items

    def latest_turn(self, agent: str) -> TurnEntry | None:
        """``agent``'s newest turn: its latest running one, else the last that ended
        (among its service's kept turns)."""
        running = [turn for turn in self.running.values() if turn.agent == agent]
        if running:
            return max(running, key=_started)
        found = self.agents.get(agent)
        if found is None:
            return None
        for turn in reversed(found.service.turns.items):
            if turn.agent == agent:
                return turn
        return None

    def find_turn(self, key: str) -> TurnEntry | None:
        """By key, else by uuid (the newest turn with it): indexed, running, or among
        the recent ones the timeline lists (which may have left a small index)."""
        found = self.turns.get(key) or self.running.get(key)
        if found is None:
            for turn in (*reversed(self.turns.values()), *reversed(self.recent.items)):
                if (turn.key == key or turn.uuid == key) and self._kept(turn.service):
                    found = turn
                    break
        if found is not None and found.trace_id is None:
            found.trace_id = self.feeder.trace_of(found)
        return found

    def _kept(self, service: ServiceState) -> bool:
        """Whether ``service`` is still in the store (a removed one's turns may linger
        in the recent ring, unfindable)."""
        return self.services.get((service.name, service.instance)) is service

    def trace_tree(self, trace_id: str) -> TraceTree | None:
        return self.traces.tree(trace_id)

    def unavailable(self, panel: Panel, agent: str | None = None) -> str | None:
        return self.feeder.unavailable(panel, agent, self.sources.of(agent).panel_note(panel))

    def remove_service(self, service: ServiceState) -> None:
        super().remove_service(service)
        self.feeder.forgot(service)

    def counters(self) -> dict[str, int]:
        counts = dict(self.counts)
        counts["services"] = len(self.services)
        counts["stale"] = sum(1 for s in self.services.values() if s.stale)
        counts["ended"] = sum(1 for s in self.services.values() if s.ended)
        counts["traces_evicted"] = self.traces.evicted
        counts["trace_spans_dropped"] = self.traces.dropped
        counts["log_dropped"] = self.log.dropped
        shown = self.feeder.counters(counts)
        return {name: value for name, value in shown.items() if value}

    def stuck_turns(self) -> Sequence[Stuck]:
        return self.attention.stuck

    def stuck_turn(self, key: str) -> Stuck | None:
        return self.attention.stuck_by_key.get(key)

    def awaiting_takeover(self) -> Mapping[str, int]:
        return self.attention.takeover

    def usage(self, agent: str | None = None) -> Usage | None:
        return self.attention.usage(agent)

    def credit_steps(self, turn: TurnEntry, spans: Iterable[SpanUsage]) -> None:
        """Credit ``turn``'s own model calls (``spans``) to its agent, apart from the
        rest of its trace (`UsageMeter.credit_steps`)."""
        if turn.agent is not None and turn.trace_id is not None:
            name = self._name_of(turn.agent)
            meter = self.attention.meter
            meter.credit_steps(turn.trace_id, spans, turn.agent, turn.service.name, name)

    def usage_of(self, span: SpanUsage) -> CallUsage | None:
        """The model usage ``span`` reports (read once, when it arrived, if recent)."""
        return self.attention.meter.usage_of(span)

    def service_usage(self, service: str) -> Usage | None:
        return self.attention.meter.service(service)

    def priced(self) -> bool:
        return self.attention.meter.priced

    def budget_news(self) -> list[BudgetPassed]:
        return self.attention.budget_news()

    def over_budget(self) -> frozenset[str]:
        return self.attention.over

    # -- what feeders that reach into an agent's process set -----------------------------------

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
        From then on the agent is offered them. Bounded (`bounded_queue`,
        `bounded_context`): they may come from the network. False if no agent has
        key ``agent``."""
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
        """The waiting turns the feeder reads where they wait, else those a feeder set
        (`set_contents`); none otherwise."""
        read = self.feeder.queued_turns(agent)
        if read is not None:
            return read
        found = self.agents.get(agent)
        if found is None or found.queued is None:
            return []
        rows = list(found.queued)
        if found.queued_more:
            rows.append(("…", f"{found.queued_more} more", "", ""))
        return rows

    def context_contents(self, agent: str) -> ContextContents | None:
        """The context items the feeder reads where they live, else those a feeder set
        (`set_contents`); ``None`` otherwise."""
        read = self.feeder.context_contents(agent)
        if read is not None:
            return read
        found = self.agents.get(agent)
        return found.context if found is not None else None

    def mailboxes(self) -> Mapping[str, MailboxStats]:
        return self.feeder.mailboxes(self.mailbox_stats)

    def finished_count(self) -> int:
        """The agents that are gone (`AgentEntry.gone`): of processes that said
        goodbye, or that left their living process (one that just stops sending keeps
        its agents, marked stale: see `forget_stale`)."""
        return sum(1 for agent in self.agents.values() if agent.gone)

    def clear_finished(self) -> int:
        """Remove every gone agent, and every process that said goodbye with its
        turns; how many agents went."""
        self.feeder.cleared()
        ended = [s for s in self.services.values() if s.ended]
        left = [a for a in self.agents.values() if a.gone and not a.service.ended]
        count = sum(len(s.agents) for s in ended) + len(left)
        for service in ended:
            self.remove_service(service)
        for agent in left:
            self.forget_agent(agent)
        if count or ended:
            self._version += 1
        return count

    # -- the fleet's own views ---------------------------------------------------------------

    def turn_trace(self, key: str) -> TraceTree | None:
        """The trace of a turn (by key or uuid), if any of its spans arrived."""
        turn = self.find_turn(key)
        return self.traces.tree(turn.trace_id) if turn is not None and turn.trace_id else None

    def service_rows(self) -> list[ServiceState]:
        return sorted(self.services.values(), key=lambda s: s.label)


def _started(turn: TurnEntry) -> float:
    return turn.started


def _row_order(agent: AgentEntry) -> tuple[bool, float, str, str, str]:
    left = agent.unregistered_at
    return (left is not None, left or 0.0, agent.service.label, agent.name, agent.key)


# The store is a DashboardView (checked by mypy, free at run time).
_VIEW: type[DashboardView] = Store
