"""The in-process feeder's side of the dashboard's one store: a process is a fleet
of one.

[`DashboardModel`][pygents_tui.DashboardModel] (``pygents_tui.feeders.process.model``) is fed by
the core's subscription seam and writes into the store (`LiveProcess`, a
`pygents_tui.state.Store`) as one service, this program, with one instance, this
process, whose agents are labelled by their bare names. What only a process's own
agents can give is added here: their live state (queue depth, current turn, context
sizes), read from the registry on every drain, the agents that have left the
registry (finished, with their totals), their queued turns and context items when a
panel asks, control (`ThisProcess`, its `Source`) and — when an OpenTelemetry SDK is
configured — the spans of this process for the trace view.
"""

from __future__ import annotations

import functools
import importlib
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, cast

from pygents import Agent, AgentRegistry, Subscriber, Turn, subscribe
from pygents_tui.feeders.process._agents import FinishedAgents
from pygents_tui.feeders.process._mailboxes import served_stats
from pygents_tui.state import (
    POOL_SHOWN,
    QUEUE_SHOWN,
    Action,
    AgentEntry,
    Capabilities,
    Capacity,
    ContextContents,
    Feeder,
    Panel,
    Reply,
    Sources,
    Store,
    StoreLimits,
    TraceTree,
    TurnEntry,
)
from pygents_tui.text._preview import preview

if TYPE_CHECKING:
    from pygents.redis import MailboxStats
    from pygents_tui.listen.decode import ReceivedSpan

__all__ = ["LiveProcess", "SpanSource", "ThisProcess"]

NO_SDK = "no OpenTelemetry SDK is configured in this process, so no spans to show"


class SpanSource(Protocol):
    """Where the spans of this process come from (`spans.SpanCapture`)."""

    @property
    def version(self) -> int: ...

    @property
    def dropped(self) -> int: ...

    def drain(self, sink: Callable[[ReceivedSpan], object] | None = None) -> bool: ...

    def trace_of(self, uuid: str) -> str | None: ...

    def tree(self, trace_id: str) -> TraceTree | None: ...

    def close(self) -> None: ...


def _spans_module() -> ModuleType | None:
    """``pygents_tui.feeders.process.spans``, or ``None`` without the OpenTelemetry SDK (or the OTLP
    message package) that it needs: the trace view is optional, the dashboard is not."""
    try:
        return importlib.import_module("pygents_tui.feeders.process.spans")
    except ImportError:
        return None


@functools.cache
def _spans() -> ModuleType | None:
    """`_spans_module`, imported once, when the first in-process store is made: importing
    ``pygents_tui`` (or its state package) must not load the OpenTelemetry SDK."""
    return _spans_module()


class ThisProcess:
    """The control side of this process's runtime (a `Source`): a process is a fleet
    of one that the dashboard can reach into. It serves every agent it lists and
    offers everything: its agents can be paused, their queues and contexts read,
    and what the program prints is shown."""

    def serves(self, agent: str) -> bool:
        return True

    def capabilities(self, agent: str | None) -> Capabilities:
        return _EVERYTHING

    def act(self, action: Action, agent: str) -> Reply:
        """``pause``: pause the registered agent named ``agent``, or resume it."""
        found = AgentRegistry.find(agent)
        if found is None:
            return Reply(f"{agent} has finished", True)
        if found.is_paused:
            found.resume()
            return Reply(f"{agent} resumed")
        found.pause()
        return Reply(f"{agent} will pause before its next turn")


_EVERYTHING = Capabilities()


class _Traces:
    """The store's traces: this process's spans, once found (`LiveProcess.spans`)."""

    evicted = 0
    dropped = 0

    def __init__(self, feeder: LiveProcess) -> None:
        self._feeder = feeder

    def tree(self, trace_id: str) -> TraceTree | None:
        spans = self._feeder.spans
        return spans.tree(trace_id) if spans is not None else None


class LiveProcess(Feeder):
    """The store as the in-process feeder keeps it: one service (this program) with
    one instance (this process), its agents labelled by their bare names. On every
    drain (`refresh_live`) what only live agents can say is read from the registry:
    every registered agent gets a row, with its phase, queue depth, current turn and
    context sizes; those that left are marked finished (`FinishedAgents`). Their
    queued turns and context items are read when a panel asks (`queued_turns`,
    `context_contents`): a registry lookup, and previews of the few items shown.

    ``tracer_provider``: the provider whose spans the trace view shows (``None``: the
    global one, looked for until an SDK installs one)."""

    def __init__(
        self,
        limits: StoreLimits,
        clock: Callable[[], float],
        *,
        max_finished: int,
        tracer_provider: object | None = None,
    ) -> None:
        # The store this feeder writes (what the app reads): its labels are the
        # agents' own names, and a process of one never goes stale.
        self.store = Store(limits, _Traces(self), clock, stale_after=math.inf)
        self.store.label_width = 10
        self.store.feeder = self
        self.clock = clock
        self.process = self.store.add_service(
            _program(), f"pid {os.getpid()}", label=_program(), at=self.store.epoch, pid=os.getpid()
        )
        self.process.bare = True
        self.finished = FinishedAgents(max_finished)  # of the store's agents, those that left
        self.store.sources = Sources(ThisProcess())
        self.spans: SpanSource | None = None
        self._subscription: Any = None
        self._find_provider: Callable[[], object] | None = None
        self.trace_with(tracer_provider)

    def trace_with(self, tracer_provider: object | None) -> None:
        """Show the spans of ``tracer_provider`` (``None``: the global provider's),
        instead of those shown so far."""
        if self.spans is not None:
            self.spans.close()  # (its provider keeps it, closed: it ignores spans)
            self.spans = None
        spans = _spans()
        if spans is not None:
            given = tracer_provider is not None
            self._find_provider = (lambda: tracer_provider) if given else spans.global_provider
            self._watch_provider()

    def _watch_provider(self) -> None:
        """Register on the SDK's provider once there is one. The program may configure
        its SDK after the dashboard started: looked for again at every drain until found
        (an attribute read and an isinstance check)."""
        spans = _spans()
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
        if self._subscription is None:
            self._subscription = subscribe(cast("Subscriber", self))

    def close(self) -> None:
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
        detached = _detached_turns(self.store.running.values())
        for found in AgentRegistry.all():
            entry = self.store.agents.get(found.name)
            if entry is None:
                entry = self.agent(found.name)
                changed = True
            queue, pool = found.context_queue, found.context_pool
            current = found.current_turn
            entry.live_phase = _phase(found, entry.phase)
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
        return _phase(agent, found.phase if found is not None else "idle")

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
            (str(position), turn.tool.name, _arguments(turn), f"{turn.timeout:g}s")
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


def _program() -> str:
    """This program's name, as a service of one instance is named."""
    return Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"


def _phase(agent: Agent, seen: str) -> str:
    """What a registered agent is doing: paused or running as it says, else what its
    last run left (``seen``), idle once a run has ended."""
    if agent.is_paused:
        return "paused"
    if agent.is_running:
        return "running"
    return seen if seen != "running" else "idle"


def _detached_turns(running: Iterable[TurnEntry]) -> dict[str, list[TurnEntry]]:
    """The running turns by agent key, oldest first. An agent's own ``run()`` runs
    one turn at a time, its ``current_turn``; a ``pygents.redis`` Worker runs many
    of its turns at once, each in an agent run of its own that never takes the agent
    (``is_running`` stays false): these say what it is doing then."""
    found: dict[str, list[TurnEntry]] = {}
    for turn in running:
        if turn.agent is not None:
            found.setdefault(turn.agent, []).append(turn)
    for turns in found.values():
        turns.sort(key=lambda turn: turn.started)
    return found


def _arguments(turn: Turn[Any]) -> str:
    """A waiting turn's arguments, in one bounded line."""
    arguments = ", ".join(f"{k}={preview(v, 24)}" for k, v in turn.kwargs.items())
    if turn.args:
        arguments = ", ".join(preview(a, 16) for a in turn.args) + (
            f", {arguments}" if arguments else ""
        )
    return preview(arguments, 40)
