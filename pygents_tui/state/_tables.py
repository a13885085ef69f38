"""The dashboard state's tables, and the writes every feeder makes to them.

Services (one `ServiceState` per instance) own their agents and turns; the store
indexes agents by key, turns by key (bounded, oldest out first) and keeps the running
ones apart. Each feeder turns what its source says (core scopes in-process, OTLP
records over the wire) into the same calls here: open a turn, count its values,
finish it, lose it, adopt it into an agent. So a turn is counted, logged and kept
one way whoever reported it.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Protocol

from pygents import StopReason
from pygents_tui.state._entries import (
    AgentEntry,
    LogEntry,
    Ring,
    Run,
    ServiceState,
    StoreLimits,
    TurnEntry,
)
from pygents_tui.state._view import TraceTree

__all__ = ["Tables", "Traces"]


class Traces(Protocol):
    """Where a store's spans are kept (the OTLP feeder's trace store): what reading
    and the status line need of it."""

    @property
    def evicted(self) -> int: ...

    @property
    def dropped(self) -> int: ...

    def tree(self, trace_id: str) -> TraceTree | None: ...


class Tables:
    """The store's tables and their writers (see the module docstring)."""

    def __init__(self, limits: StoreLimits, traces: Traces) -> None:
        self.limits = limits
        self.traces = traces
        self.log: Ring[LogEntry] = Ring(limits.log)
        self.services: dict[tuple[str, str], ServiceState] = {}
        self.agents: OrderedDict[str, AgentEntry] = OrderedDict()
        self.turns: OrderedDict[str, TurnEntry] = OrderedDict()
        self.running: dict[str, TurnEntry] = {}
        self.recent: Ring[TurnEntry] = Ring(limits.recent)
        self.counts: Counter[str] = Counter()
        self.previews_seen = False  # any value preview received at all
        self._service_ids = 0
        self._rows_version = 0  # see `rows_version`

    @property
    def rows_version(self) -> int:
        """Bumped by every write that changes which agents are listed or their order
        (an agent added, evicted, removed, renamed, or leaving the registry or coming
        back): the store keeps its sorted rows until it moves, so a refresh of a big
        fleet does not sort every agent again. Every such write is a method here,
        which is what keeps the count exact: feeders never set those fields
        themselves."""
        return self._rows_version

    def rows_changed(self) -> None:
        self._rows_version += 1

    # -- services -------------------------------------------------------------------------------

    def add_service(
        self,
        name: str,
        instance: str,
        *,
        label: str,
        at: float,
        host: str | None = None,
        pid: int | None = None,
        run: Run = (None, None),
    ) -> ServiceState:
        """A new instance of service ``name``; past the bound, the one heard of least
        recently goes first (counted)."""
        limits = self.limits
        while len(self.services) >= limits.services:
            oldest = min(self.services.values(), key=lambda s: s.last_seen)
            self.remove_service(oldest)
            self.counts["services_evicted"] += 1
        self._service_ids += 1
        service = ServiceState(
            id=f"s{self._service_ids}",
            name=name,
            instance=instance,
            host=host,
            pid=pid,
            run=run,
            label=label,
            first_seen=at,
            last_seen=at,
            log=Ring(limits.service_log),
            turns=Ring(limits.service_turns),
        )
        self.services[(name, instance)] = service
        return service

    def remove_service(self, service: ServiceState) -> None:
        """Remove a service with its agents and turns, in time proportional to what
        it holds (a flood of new services evicts thousands in one drain)."""
        del self.services[(service.name, service.instance)]
        self.retire_agents(service)
        for key in service.turn_keys:
            self.turns.pop(key, None)
            self.running.pop(key, None)
        service.turn_keys.clear()

    def retire_agents(self, service: ServiceState) -> None:
        for agent in service.agents.values():
            self.agents.pop(agent.key, None)
        service.agents.clear()
        self.rows_changed()

    def forget_agent(self, agent: AgentEntry) -> None:
        """Remove one agent (its turns stay until they leave their bounds)."""
        self.agents.pop(agent.key, None)
        agent.service.agents.pop(agent.local, None)
        self.rows_changed()

    def lose_running(self, service: ServiceState, at: float, why: str) -> list[TurnEntry]:
        """End a service's running turns as lost (its process is gone); those turns."""
        running = self.running
        lost = sorted(
            (running[key] for key in service.turn_keys if key in running), key=lambda t: t.started
        )
        for turn in lost:
            self.lose(turn, at, why)
        return lost

    def note(self, service: ServiceState, at: float, who: str, kind: str, text: str) -> None:
        entry = LogEntry(at, who, kind, text)
        self.log.append(entry)
        service.log.append(entry)

    # -- agents ---------------------------------------------------------------------------------

    @staticmethod
    def label(service: ServiceState, name: str) -> str:
        """What a row shows for ``name`` (an agent's, or ``—``) of ``service``: the bare
        name in a fleet of one (`ServiceState.bare`), else prefixed by the service."""
        return name if service.bare else f"{service.label}/{name}"

    def new_agent(
        self, service: ServiceState, local: str, name: str, key: str, label: str
    ) -> AgentEntry:
        """Agent ``local`` (its id within ``service``) under ``key`` (unique in the
        store) and ``label`` (what its row shows); past the bound, the agent heard of
        least recently goes first (counted)."""
        while len(self.agents) >= self.limits.agents:
            _, evicted = self.agents.popitem(last=False)
            evicted.service.agents.pop(evicted.local, None)
            self.counts["agents_evicted"] += 1
        agent = AgentEntry(
            key=key,
            name=name,
            label=label,
            service=service,
            values_tail=Ring(self.limits.values),
            turns=Ring(self.limits.agent_turns),
            local=local,
        )
        service.agents[local] = agent
        self.agents[key] = agent
        self.rows_changed()
        return agent

    def rename_agent(self, agent: AgentEntry, name: str, label: str) -> None:
        """The agent's process gave it another name (and so another label)."""
        agent.name, agent.label = name, label
        self.rows_changed()

    def mark_left(self, agent: AgentEntry, at: float | None) -> None:
        """The agent left the registry at ``at`` (``None``: it is registered again):
        it is listed, dimmed, after those still registered."""
        agent.unregistered_at = at
        self.rows_changed()

    # -- the turn index and the running table -------------------------------------------------
    # Every insertion and removal goes through these, which keep each service's
    # ``turn_keys`` (the keys it has in either table) exact.

    def index_turn(self, turn: TurnEntry) -> None:
        """Make ``turn`` findable by key; the oldest indexed turn leaves past the bound."""
        turns = self.turns
        if turn.key in turns:
            return
        turns[turn.key] = turn
        turn.service.turn_keys.add(turn.key)
        while len(turns) > self.limits.turns:
            _, old = turns.popitem(last=False)
            self._unkeyed(old)

    def start_running(self, turn: TurnEntry) -> None:
        running = self.running
        if turn.key in running:
            return
        while len(running) >= self.limits.running:
            old = running.pop(next(iter(running)))
            self._unkeyed(old)
            self.counts["running_evicted"] += 1
        running[turn.key] = turn
        turn.service.turn_keys.add(turn.key)

    def stop_running(self, turn: TurnEntry) -> None:
        if self.running.pop(turn.key, None) is not None:
            self._unkeyed(turn)

    def withdraw(self, turn: TurnEntry) -> None:
        """Take back a running turn that was only inferred (`TurnFacts.inferred`): the
        run it stood for arrived as a turn of its own, which is what is counted."""
        self.turns.pop(turn.key, None)
        self.running.pop(turn.key, None)
        self._unkeyed(turn)
        agent = self.agents.get(turn.agent) if turn.agent is not None else None
        if agent is not None and agent.current_turn == turn.key:
            agent.current_turn = agent.current_tool = None

    def _unkeyed(self, turn: TurnEntry) -> None:
        if turn.key not in self.turns and turn.key not in self.running:
            turn.service.turn_keys.discard(turn.key)

    # -- turns ------------------------------------------------------------------------------------

    def open_turn(
        self, service: ServiceState, uuid: str, agent: AgentEntry | None, tool: str, at: float
    ) -> TurnEntry:
        """The turn ``uuid`` of ``service``, made (not yet running) on first word of it."""
        key = f"{service.id}/{uuid}"
        turn = self.turns.get(key) or self.running.get(key)  # (it may have left the index)
        if turn is None:
            turn = TurnEntry(
                key=key,
                uuid=uuid,
                service=service,
                agent=agent.key if agent is not None else None,
                agent_label=agent.label if agent is not None else self.label(service, "—"),
                tool=tool,
                started=at,
            )
        elif agent is not None and turn.agent is None:
            self.adopt(turn, agent)
        self.index_turn(turn)
        return turn

    def add_values(self, turn: TurnEntry, count: int | None) -> None:
        """Take a running count of a turn's values (counts may arrive out of order or
        twice: only growth is added, to the turn and to its agent)."""
        if count is None or count <= turn.values:
            return
        agent = self.agents.get(turn.agent) if turn.agent is not None else None
        if agent is not None:
            agent.values += count - turn.values
        turn.values = count

    def returned(self, turn: TurnEntry) -> None:
        """Count what a completed turn that does not stream returned as its one value,
        once both its start and its end are known."""
        if turn.returns and turn.stop_reason is StopReason.COMPLETED and not turn.values:
            self.add_values(turn, 1)

    def finish(
        self, turn: TurnEntry, reason: StopReason | None, error: str | None, ended: float
    ) -> None:
        """End ``turn``: out of the running table, into the recent ones, counted by
        its agent (once)."""
        turn.end(reason, ended, error)
        self.turn_ended(turn)
        self.returned(turn)
        self.stop_running(turn)
        self.recent.append(turn)
        turn.service.turns.append(turn)
        agent = self.agents.get(turn.agent) if turn.agent is not None else None
        if agent is not None:
            agent.turns.append(turn)
            self._count(agent, turn)

    def turn_ended(self, turn: TurnEntry) -> None:
        """Told of every turn that ends (the store learns its tool's pace from it)."""

    def lose(self, turn: TurnEntry, at: float, why: str) -> None:
        """A turn of a process that is gone (``why``: it ``restarted``, or ``ended``):
        it cannot end now, so it ends here, failed, as lost."""
        self.finish(turn, StopReason.ERROR, f"lost: its process {why}", max(at, turn.started))

    def _count(self, agent: AgentEntry, turn: TurnEntry) -> None:
        if agent.current_turn == turn.key:
            agent.current_turn = agent.current_tool = None
        kind, text = agent.turn_ended(turn)
        at = turn.ended if turn.ended is not None else turn.started
        self.note(turn.service, at, agent.label, kind, text)

    def adopt(self, turn: TurnEntry, agent: AgentEntry) -> None:
        """Give an agent a turn first seen without one (its span came first)."""
        turn.agent, turn.agent_label = agent.key, agent.label
        agent.values += turn.values
        if turn.ended is not None:
            self._count(agent, turn)
