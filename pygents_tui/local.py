"""The in-process model seen through the panels' read API.

[`DashboardModel`][pygents_tui.DashboardModel] is fed by the core's subscription
seam and stays free of any UI; [`LocalView`][pygents_tui.local.LocalView] is the
thin adapter that makes it a
`DashboardView`, the protocol every panel
reads (the fleet model of ``pygents-tui listen`` is the other one). It adds what
only a process's own agents can give: their live state (queue depth, current turn,
context sizes), read from the registry at refresh time, the agents that have left the
registry (finished, with their totals), and — when an OpenTelemetry SDK is configured —
the spans of this process for the trace view.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from pygents import Agent, AgentRegistry, Turn, subscribe
from pygents_tui._mailboxes import served_stats
from pygents_tui._preview import preview
from pygents_tui._records import LogEntry, TurnRecord, ValueRecord
from pygents_tui.model import AgentState, DashboardModel
from pygents_tui.state import (
    POOL_SHOWN,
    QUEUE_SHOWN,
    Action,
    Capabilities,
    Capacity,
    ContextContents,
    DashboardView,
    Panel,
    Reply,
    Sources,
    TraceTree,
    of_agent,
)

if TYPE_CHECKING:
    from pygents.redis import MailboxStats

__all__ = ["LocalAgentRow", "LocalView", "SpanSource", "ThisProcess"]

NO_SDK = "no OpenTelemetry SDK is configured in this process, so no spans to show"


class SpanSource(Protocol):
    """Where the spans of this process come from (``pygents_tui.spans.SpanCapture``)."""

    @property
    def version(self) -> int: ...

    @property
    def dropped(self) -> int: ...

    def drain(self) -> bool: ...

    def trace_of(self, uuid: str) -> str | None: ...

    def tree(self, trace_id: str) -> TraceTree | None: ...

    def close(self) -> None: ...


def _spans_module() -> ModuleType | None:
    """``pygents_tui.spans``, or ``None`` without the OpenTelemetry SDK (or the OTLP
    message package) that it needs: the trace view is optional, the dashboard is not."""
    try:
        return importlib.import_module("pygents_tui.spans")
    except ImportError:
        return None


_SPANS = _spans_module()


@dataclass(frozen=True, slots=True)
class LocalAgentRow:
    """One agent, registered or finished, as the agents table shows it (an
    ``AgentRow``). A finished one (``gone``) has no queue, turn or context left."""

    name: str
    state: str
    queue_depth: int | None
    current_tool: str | None
    completed: int
    failed: int
    timed_out: int
    cancelled: int
    values: int
    evictions: int
    context_queue: Capacity | None
    context_pool: Capacity | None
    throughput: Sequence[int]
    last_error: str | None
    current: Turn[Any] | None = field(default=None, repr=False)
    gone: bool = False

    @property
    def key(self) -> str:
        return self.name  # the registry keeps names unique in a process

    @property
    def label(self) -> str:
        return self.name

    @property
    def current_turn(self) -> str | None:
        """The running turn's id, made only when asked for (a turn makes its id on
        first use, and nothing on the agents table shows it)."""
        return self.current.uuid if self.current is not None else None


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


class LocalView:
    """``model`` through the `DashboardView`
    protocol. ``tracer_provider``: the provider whose spans the trace view shows
    (``None``: the global one, looked for until an SDK installs one). Its source is
    `ThisProcess`."""

    label_width = 10  # the agents' own names

    def __init__(self, model: DashboardModel, tracer_provider: object | None = None) -> None:
        self.model = model
        self.sources = Sources(ThisProcess())
        self.spans: SpanSource | None = None
        self._subscription: Any = None
        self._find_provider: Callable[[], object] | None = None
        if _SPANS is not None:
            given = tracer_provider is not None
            self._find_provider = (lambda: tracer_provider) if given else _SPANS.global_provider
            self._watch_provider()

    def _watch_provider(self) -> None:
        """Register on the SDK's provider once there is one. The program may configure
        its SDK after the dashboard started: looked for again at every drain until found
        (an attribute read and an isinstance check)."""
        if self._find_provider is None or _SPANS is None:
            return
        capture: SpanSource | None = _SPANS.attach(self._find_provider())
        if capture is not None:
            self.spans = capture
            self._find_provider = None

    def start(self) -> None:
        """Subscribe the model to this process's runtime."""
        if self._subscription is None:
            self._subscription = subscribe(self.model)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        if self.spans is not None:
            self.spans.close()
        self._find_provider = None

    # -- what only this process's agents offer -------------------------------------------

    @property
    def wall_clock(self) -> Callable[[float], datetime]:
        return self.model.wall_time

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

    def mailboxes(self) -> Mapping[str, MailboxStats]:
        return served_stats()

    def finished_count(self) -> int:
        return len(self.model.finished)

    def clear_finished(self) -> int:
        return self.model.clear_finished()

    # -- the protocol ------------------------------------------------------------------

    @property
    def clock(self) -> Callable[[], float]:
        return self.model.clock

    @property
    def epoch(self) -> float:
        return self.model.epoch

    @property
    def version(self) -> int:
        return self.model.version + (self.spans.version if self.spans is not None else 0)

    def drain(self) -> bool:
        changed = self.model.drain()
        if self.spans is None:
            self._watch_provider()
        if self.spans is not None and self.spans.drain():
            changed = True
        return changed

    def agent_rows(self) -> list[LocalAgentRow]:
        """The registered agents by name, then the finished ones, oldest first."""
        model = self.model
        rows = [self._row(agent) for agent in model.live_agents()]
        rows += [_finished(state) for state in model.finished_agents()]
        return rows

    def _row(self, agent: Agent) -> LocalAgentRow:
        state = self.model.agents.get(agent.name) or AgentState(agent.name)  # none seen yet
        queue, pool = agent.context_queue, agent.context_pool
        return _agent_row(
            state,
            self.model.phase(agent),
            queue_depth=agent.queue_depth,
            current=agent.current_turn,
            context=(Capacity(len(queue), queue.limit), Capacity(len(pool), pool.limit)),
        )

    def running_turns(self, agent: str | None = None) -> list[TurnRecord]:
        return self.model.running_turns(agent)

    def recent_turns(self, agent: str | None = None) -> Sequence[TurnRecord]:
        recent = self.model.recent
        return recent if agent is None else of_agent(recent, agent)  # no copy of them all

    def value_tail(self, agent: str) -> tuple[int, Sequence[ValueRecord]]:
        state = self.model.agents.get(agent)
        return (state.values, state.values_tail) if state is not None else (0, ())

    def event_log(self) -> tuple[int, Sequence[LogEntry]]:
        return self.model.log_total, self.model.log.items

    def find_turn(self, key: str) -> TurnRecord | None:
        """The turn with id ``key``; its trace id learned from its span if the model
        had no way to ask for it when the turn started."""
        record = self.model.find_turn(key)
        if record is not None and record.trace_id is None and self.spans is not None:
            record.trace_id = self.spans.trace_of(key)
        return record

    def trace_tree(self, trace_id: str) -> TraceTree | None:
        return self.spans.tree(trace_id) if self.spans is not None else None

    def unavailable(self, panel: Panel, agent: str | None = None) -> str | None:
        if panel == "trace" and self.spans is None:
            return NO_SDK
        return self.sources.of(agent).panel_note(panel)

    def counters(self) -> dict[str, int]:
        model = self.model
        counts = {
            "received": model.processed,
            "dropped": model.dropped,
            "completed": model.completed,  # cleared agents' turns too
            "finished_dropped": model.finished.dropped,
        }
        if self.spans is not None:
            counts["spans_dropped"] = self.spans.dropped
        return {name: value for name, value in counts.items() if value}


def _arguments(turn: Turn[Any]) -> str:
    """A waiting turn's arguments, in one bounded line."""
    arguments = ", ".join(f"{k}={preview(v, 24)}" for k, v in turn.kwargs.items())
    if turn.args:
        arguments = ", ".join(preview(a, 16) for a in turn.args) + (
            f", {arguments}" if arguments else ""
        )
    return preview(arguments, 40)


def _finished(state: AgentState) -> LocalAgentRow:
    """The row of an agent that left the registry: its totals, kept until cleared."""
    return _agent_row(state, state.phase, gone=True)


def _agent_row(
    state: AgentState,
    phase: str,
    *,
    queue_depth: int | None = None,
    current: Turn[Any] | None = None,
    context: tuple[Capacity, Capacity] | None = None,
    gone: bool = False,
) -> LocalAgentRow:
    """An agent's totals from ``state``, with what only a registered agent has."""
    return LocalAgentRow(
        name=state.name,
        state=phase,
        queue_depth=queue_depth,
        current_tool=current.tool.name if current is not None else None,
        completed=state.completed,
        failed=state.failed,
        timed_out=state.timed_out,
        cancelled=state.cancelled,
        values=state.values,
        evictions=state.evictions,
        context_queue=context[0] if context is not None else None,
        context_pool=context[1] if context is not None else None,
        throughput=state.throughput,
        last_error=state.last_error,
        current=current,
        gone=gone,
    )


# The in-process view is a DashboardView (checked by mypy, free at run time).
_VIEW: type[DashboardView] = LocalView
