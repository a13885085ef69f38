"""The read API the dashboard's panels use, whatever feeds them.

The dashboard's one store (`Store`) answers the questions below, whichever feeders
write into it (this process's runtime, the OTLP receiver, a recording), so a panel
never needs to know where a row came from; a replay's view wraps a store and answers
them too. The rows are protocols rather than classes so that the store can hand out
its own records without copying them at every refresh (ten times a second).

Identity and display are separate on purpose: in-process an agent's name is unique
(the registry sees to it), but across a fleet two processes can each run a
``planner``. Rows therefore carry a ``key`` (unique, stable, used for selection and
filtering) and a ``label`` (what the row shows).

Everything here is plain data: names and texts are stored as received, never parsed
as markup, and bounded in length by whoever built them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

from pygents import StopReason
from pygents_tui.state._sources import Sources

if TYPE_CHECKING:
    from pygents.redis import MailboxStats  # a type only: the dashboard never imports it
    from pygents_tui.state._prices import Meters
    from pygents_tui.state._stuck import Stuck
    from pygents_tui.state._usage import BudgetPassed, Usage

__all__ = [
    "AgentRow",
    "Capacity",
    "ContextContents",
    "DashboardView",
    "EventRow",
    "Panel",
    "SpanNode",
    "ToolTally",
    "TraceTree",
    "TurnRow",
    "ValueRow",
]

Panel = Literal[
    "agents",
    "queue",
    "running",
    "values",
    "context",
    "events",
    "timeline",
    "output",
    "trace",
    "mailbox",
]


class Capacity(NamedTuple):
    """A store's size against its limit (``None``: unbounded)."""

    size: int
    limit: int | None


@dataclass(frozen=True, slots=True)
class ContextContents:
    """An agent's context as the context panel lists it, in bounded previews: its
    queue window's items (oldest first) and its pool's last items as ``(id,
    description, content)``."""

    queue: Capacity
    queue_items: tuple[str, ...]
    pool: Capacity
    pool_items: tuple[tuple[str, str, str], ...]


@dataclass(slots=True)
class ToolTally:
    """What an agent's calls of one tool came to, as its spans told (another
    framework's agent: each call is a span of its run, not a turn)."""

    calls: int = 0
    failed: int = 0
    seconds: float = 0.0  # all calls together
    last_error: str | None = None

    def add(self, seconds: float, error: str | None) -> None:
        """Count one call that took ``seconds`` (``error``: why it failed)."""
        self.calls += 1
        self.seconds += max(seconds, 0.0)
        if error is not None:
            self.failed += 1
            self.last_error = error


class AgentRow(Protocol):
    """One agent as the agents table shows it."""

    @property
    def key(self) -> str:
        """Unique and stable: selection, filters and table rows use it."""

    @property
    def name(self) -> str:
        """The agent's own name (not unique across a fleet)."""

    @property
    def label(self) -> str:
        """What the row shows: the name, prefixed by service and instance in listen mode."""

    @property
    def state(self) -> str:
        """idle / running / paused / finished / failed, or stale (listen mode: its
        process stopped sending)."""

    @property
    def gone(self) -> bool:
        """The agent is no longer there (in-process: it left the registry); the row
        keeps its totals, dimmed, until the user clears it. Its queue and context
        are gone with it."""

    @property
    def queue_depth(self) -> int | None:
        """Turns waiting; ``None`` when not known yet."""

    @property
    def current_tool(self) -> str | None: ...

    @property
    def current_turn(self) -> str | None:
        """The key of the turn it is running, if any."""

    @property
    def completed(self) -> int: ...

    @property
    def failed(self) -> int: ...

    @property
    def timed_out(self) -> int: ...

    @property
    def cancelled(self) -> int: ...

    @property
    def values(self) -> int:
        """Values streamed, counted exactly even when previews are not sent."""

    @property
    def evictions(self) -> int: ...

    @property
    def context_queue(self) -> Capacity | None: ...

    @property
    def context_pool(self) -> Capacity | None: ...

    @property
    def throughput(self) -> Sequence[int]:
        """Turns completed per second, oldest first (for a sparkline)."""

    @property
    def last_error(self) -> str | None: ...

    @property
    def conversation(self) -> str | None:
        """The conversation (session) its last run belonged to, when its sender said."""

    @property
    def tools(self) -> Mapping[str, ToolTally]:
        """Its calls per tool, when its sender traces them as steps of its runs
        (another framework's agent); empty for pygents' own, whose turns are them."""


class TurnRow(Protocol):
    """One turn, running or ended. Times are on the model's clock (``clock()``)."""

    @property
    def key(self) -> str:
        """Unique among the model's turns (the uuid in-process)."""

    @property
    def uuid(self) -> str: ...

    @property
    def agent(self) -> str | None:
        """The key of the agent that ran it (``None``: a bare turn, or not known yet)."""

    @property
    def agent_label(self) -> str: ...

    @property
    def tool(self) -> str: ...

    @property
    def started(self) -> float: ...

    @property
    def ended(self) -> float | None: ...

    @property
    def timeout(self) -> float: ...

    @property
    def streaming(self) -> bool: ...

    @property
    def stop_reason(self) -> StopReason | None: ...

    @property
    def error(self) -> str | None: ...

    @property
    def values(self) -> int: ...

    @property
    def trace_id(self) -> str | None:
        """32 lowercase hex digits, when the turn was traced."""

    @property
    def stale(self) -> bool:
        """Listen mode: still "running" but its process stopped sending."""

    @property
    def inferred(self) -> bool:
        """Known running only from its steps' spans (another framework's run)."""

    @property
    def conversation(self) -> str | None:
        """The conversation (session) it belongs to, when its sender said."""

    @property
    def paced_as(self) -> str | None:
        """Whose usual pace it is judged against, when not its tool's."""

    def elapsed_at(self, now: float) -> float: ...

    def details(self) -> Sequence[tuple[str, str]]:
        """Labelled lines for the inspector (arguments, output, tags, ids…), already
        bounded; what is not known is left out."""

    def hook_events(self) -> Sequence[EventRow]:
        """What its feeder saw happen to it, oldest first, bounded: in-process, its
        start, the hook events fired inside it, its values and its end; empty where a
        feeder keeps none (the inspector's timeline when there are no spans)."""


class ValueRow(Protocol):
    @property
    def at(self) -> float: ...

    @property
    def tool(self) -> str: ...

    @property
    def text(self) -> str: ...


class EventRow(Protocol):
    @property
    def at(self) -> float: ...

    @property
    def agent(self) -> str:
        """The agent's label (or ``—``)."""

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SpanNode:
    """One span of a trace tree. Offsets are seconds from the trace's first start."""

    name: str
    span_id: str
    parent_id: str | None
    service: str
    kind: str
    start: float
    end: float
    status: str  # unset / ok / error
    status_message: str
    attributes: tuple[tuple[str, str], ...]
    children: tuple[SpanNode, ...]
    orphan: bool = False  # its parent has not arrived (or was dropped)

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class TraceTree:
    trace_id: str
    roots: tuple[SpanNode, ...]
    spans: int
    dropped: int  # spans of this trace that did not fit in its bound
    duration: float

    def rows(self) -> list[tuple[int, SpanNode]]:
        """The tree depth first as ``(depth, node)`` rows: a waterfall's lines. Walked
        without recursion, however deep the tree."""
        rows: list[tuple[int, SpanNode]] = []
        stack: list[tuple[int, SpanNode]] = [(0, n) for n in reversed(self.roots)]
        while stack:
            depth, node = stack.pop()
            rows.append((depth, node))
            stack.extend((depth + 1, child) for child in reversed(node.children))
        return rows


class DashboardView(Protocol):
    """What every panel reads. ``drain()`` folds what arrived since the last call
    (the UI calls it on a timer) and says whether anything changed.

    What is offered is asked per agent of the state's `Sources` (``sources.of(key)``),
    and actions go through them (``sources.act``): the app and the panels follow
    that, never the source's type, and say in one line what is not offered."""

    @property
    def sources(self) -> Sources:
        """The feeders that can act on the agents, and what each agent is offered."""

    @property
    def label_width(self) -> int:
        """How wide the agents' labels are drawn (a fleet's carry their service)."""

    @property
    def wall_clock(self) -> Callable[[float], datetime] | None:
        """The date of a time on ``clock``, where the source knows it (``None``: times
        are shown as seconds since ``epoch``)."""

    def start(self) -> None:
        """Begin taking what the source sends (the app calls it once it is mounted)."""

    def close(self) -> None:
        """Stop taking it, and let go of what the source holds."""

    def queued_turns(self, agent: str) -> Sequence[tuple[str, str, str, str]]:
        """The agent's waiting turns as the queue panel lists them (position, tool,
        arguments, timeout); called only when the agent is offered
        ``queue_contents``."""

    def context_contents(self, agent: str) -> ContextContents | None:
        """The agent's context items (``None``: the agent is gone, and its context with
        it); called only when the agent is offered ``context_items``."""

    def mailboxes(self) -> Mapping[str, MailboxStats]:
        """The latest statistics of the agents served from ``pygents.redis``
        mailboxes, by agent key (none: no agent is)."""

    def finished_count(self) -> int:
        """Agents that are gone but still listed, with their totals, until cleared."""

    def clear_finished(self) -> int:
        """Forget the finished agents; how many there were."""

    @property
    def clock(self) -> Callable[[], float]: ...

    @property
    def epoch(self) -> float:
        """The clock's value when the model started; times are shown relative to it."""

    @property
    def version(self) -> int:
        """Bumped by every ``drain()`` that changed something."""

    def drain(self, budget: float | None = None) -> bool:
        """Fold what arrived (within ``budget`` seconds, if given), then update what
        time changes; True if anything shown changed."""

    def fold(self, budget: float | None = None) -> bool:
        """Fold what arrived, within ``budget`` seconds if given, without updating the
        rest: shown after the next `drain`."""

    @property
    def backlog(self) -> bool:
        """Whether a fold's budget left something to fold."""

    def agent_rows(self) -> Sequence[AgentRow]: ...

    def agent_row(self, key: str) -> AgentRow | None:
        """The row of agent ``key`` (one of `agent_rows`), found without a scan."""

    def running_turns(self, agent: str | None = None) -> Sequence[TurnRow]:
        """Running turns, oldest first; ``agent`` is an agent key."""

    def recent_turns(self, agent: str | None = None) -> Sequence[TurnRow]:
        """Ended turns, oldest first (bounded)."""

    def value_tail(self, agent: str) -> tuple[int, Sequence[ValueRow]]:
        """How many values were ever appended to the agent's tail, and the tail."""

    def event_log(self) -> tuple[int, Sequence[EventRow]]:
        """How many events were ever logged, and the bounded log, oldest first."""

    def find_turn(self, key: str) -> TurnRow | None: ...

    def latest_turn(self, agent: str) -> TurnRow | None:
        """``agent``'s newest turn (running first): what enter on its row opens."""

    def trace_tree(self, trace_id: str) -> TraceTree | None:
        """The spans received for a trace as a tree, ``None`` when none are known."""

    def unavailable(self, panel: Panel, agent: str | None = None) -> str | None:
        """Why part of ``panel`` cannot be shown for ``agent`` (the selected one, by
        key), in one line (``None``: everything is available)."""

    def counters(self) -> Mapping[str, int]:
        """Received, dropped and malformed counts for the status line (only non-zero
        ones need be shown)."""

    def configure_meters(self, meters: Meters) -> None:
        """Apply the configuration's price table, budgets and stuck-work thresholds
        (`Meters`), before anything arrives."""

    def stuck_turns(self) -> Sequence[Stuck]:
        """The running turns worth a look as of the last drain (slow for their tool,
        silent, or orphaned by a stale process), in the order they started."""

    def stuck_turn(self, key: str) -> Stuck | None:
        """Why the running turn ``key`` is stuck (``None``: it is not)."""

    def awaiting_takeover(self) -> Mapping[str, int]:
        """Per agent key, the Redis mailbox entries a dead worker holds until a live
        one claims them (none without mailboxes)."""

    def usage(self, agent: str | None = None) -> Usage | None:
        """Token totals, rate and cost of agent ``agent`` (``None``: the fleet's);
        ``None`` for an agent with no model call credited."""

    def service_usage(self, service: str) -> Usage | None:
        """Token totals, rate and cost of the agents of ``service`` (listen mode);
        ``None`` for a service with no model call credited."""

    def priced(self) -> bool:
        """Whether a price table is configured (without one no cost is shown)."""

    def budget_news(self) -> list[BudgetPassed]:
        """The budgets passed since the last call, each reported once (for a toast)."""

    def over_budget(self) -> frozenset[str]:
        """The scopes over a budget now: ``"fleet"`` and agent keys."""
