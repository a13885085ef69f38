"""The store's entries: services, their instances, agents and turns, the log lines
and value previews, and the bounded ring that keeps them.

(Not OTLP log records, nor the in-process feeder's turn entries in
``feeders.process._turn_entries``, nor the recording files of ``recording``.)

Plain mutable entries owned by the `Store`, whose feeders alone write them; panels
read them through the protocols of `_view` (``AgentEntry`` is an ``AgentRow``,
``TurnEntry`` a ``TurnRow``...). One definition for every source: the in-process
feeder and the OTLP receiver's both write these, and every panel reads them the same
way. Every collection here is bounded.

A `ServiceState` is one instance of a service (one process, usually): the OTLP
feeder makes one per ``service.name`` and instance it hears of; the in-process
feeder makes one, this process, so that a process is a fleet of one."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

from pygents_tui.state._contents import QueuedTurn
from pygents_tui.state._totals import AgentTotals
from pygents_tui.state._turns import TurnFacts
from pygents_tui.state._view import Capacity, ContextContents, ToolTally

__all__ = [
    "AgentEntry",
    "LogEntry",
    "Ring",
    "Run",
    "SenderClock",
    "ServiceState",
    "StoreLimits",
    "TurnEntry",
    "ValueEntry",
]

T = TypeVar("T")


@dataclass(slots=True)
class ValueEntry:
    """One value a turn produced, as the values panel shows it (a bounded preview)."""

    at: float
    tool: str
    text: str


@dataclass(slots=True)
class LogEntry:
    """One line of the event log; ``agent`` is the agent's label (or ``—``)."""

    at: float
    agent: str
    kind: str
    text: str


class Ring(Generic[T]):
    """A bounded deque that remembers how many items it was ever given, so the
    number that fell off (``dropped``) can be shown, and a reader can tell how many
    items are new since it last looked (``total``)."""

    __slots__ = ("items", "total")

    def __init__(self, maxlen: int) -> None:
        self.items: deque[T] = deque(maxlen=maxlen)
        self.total = 0

    def append(self, item: T) -> None:
        self.items.append(item)
        self.total += 1

    @property
    def maxlen(self) -> int | None:
        """How many items it keeps."""
        return self.items.maxlen

    @property
    def dropped(self) -> int:
        return self.total - len(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, index: int) -> T:
        return self.items[index]


CLOCK_WINDOW: Final = 30.0  # seconds per window of a sender's apparent delays
RETIRED_RUNS: Final = 8  # process runs of a service remembered as replaced
TOOLS_KEPT: Final = 64  # tool names tallied per agent (a sender names them)
OTHER_TOOLS: Final = "(other tools)"

Run = tuple[int | None, str | None]
"""One run of a process: its ``process.pid`` and ``process.creation.time`` (either
may be unknown; a run with neither is never told apart from another)."""


@dataclass(frozen=True, slots=True)
class StoreLimits:
    """The bounds of every table of the store (counts unless named ``bytes``); the
    ``pending_bytes`` and ``trace_`` ones bound the OTLP feeder's inbox and spans."""

    services: int = 256
    agents: int = 2048  # across all services, least recently heard of evicted first
    pending_bytes: int = 64 * 1024 * 1024  # decoded batches waiting for a drain
    turns: int = 20_000  # turns findable by key (running or recent)
    running: int = 5_000
    log: int = 2000  # the fleet-wide event log
    service_log: int = 500
    service_turns: int = 200
    agent_turns: int = 0  # ended turns each agent keeps (the service's and recent suffice)
    recent: int = 500  # ended turns shown by the timeline
    values: int = 200  # value previews per agent
    trace_bytes: int = 32 * 1024 * 1024
    trace_spans: int = 2000  # spans per trace
    agent_spans: int = 4096  # agent-run span ids remembered, to find a turn span's agent
    inferred_runs: int = 256  # another framework's runs known only by their steps, per service
    clock_lag: float = 30.0  # the most a sender's timestamps may move a time back
    clock_trust: float = 5.0  # how far a sender's clock may be off ours and still be used


class SenderClock:
    """How far a sender's clock is off the listener's: the smallest apparent delay
    (arrival wall time minus the time the sender stamped) seen over the last one to
    two windows of `CLOCK_WINDOW` seconds.

    Every record is stamped before it is sent, so no true delay is negative and the
    freshest records have almost none: their apparent delay is the clock's offset
    (plus a transport delay of milliseconds). Two windows, rotated, let the estimate
    follow a clock that is stepped (or one bogus timestamp) within a minute."""

    __slots__ = ("_current", "_previous", "_since")

    def __init__(self) -> None:
        self._current = math.inf
        self._previous = math.inf
        self._since: float | None = None  # when the current window opened (mono)

    def observe(self, delay: float, mono: float) -> None:
        if self._since is None or mono - self._since >= CLOCK_WINDOW:
            self._previous, self._current, self._since = self._current, math.inf, mono
        if delay < self._current:
            self._current = delay

    @property
    def offset(self) -> float:
        """Seconds the sender's clock is behind ours (negative: ahead); 0 when unknown."""
        smallest = min(self._current, self._previous)
        return smallest if math.isfinite(smallest) else 0.0


@dataclass(slots=True, eq=False)
class ServiceState:
    """One process (or whatever shares a ``service.name`` and instance)."""

    id: str  # short and stable for the model's lifetime: keys of its agents and turns
    name: str
    instance: str
    host: str | None
    pid: int | None
    label: str
    first_seen: float
    last_seen: float
    log: Ring[LogEntry] = field(repr=False)
    turns: Ring[TurnEntry] = field(repr=False)
    run: Run = (None, None)
    stale: bool = False
    ended: bool = False  # it said goodbye: its live mode closed normally
    spans: int = 0
    records: int = 0
    points: int = 0  # metric data points (counted, not used)
    live: bool = False  # any live record from it: else its agents are known by spans only
    # The instrumentation scope of another framework's spans it sent (GenAI conventions
    # or OpenInference): its agents' runs are read from spans, and it has no live records.
    framework: str | None = None
    # Its agents are labelled by their bare names: it is the dashboard's own process,
    # a fleet of one, where the registry keeps names unique.
    bare: bool = False
    agents: dict[str, AgentEntry] = field(default_factory=dict, repr=False)
    # The keys of its turns in the model's turn index or running table, so that
    # removing the service costs its own turns, not a scan of every table.
    turn_keys: set[str] = field(default_factory=set, repr=False)
    clock: SenderClock = field(default_factory=SenderClock, repr=False)
    retired: deque[Run] = field(default_factory=lambda: deque(maxlen=RETIRED_RUNS), repr=False)


@dataclass(slots=True, eq=False)
class AgentEntry(AgentTotals):
    """An agent of one service: its totals (`AgentTotals`, shared with the
    in-process agents) and what its live records say; satisfies `AgentRow`."""

    key: str
    name: str
    label: str
    service: ServiceState = field(repr=False)
    values_tail: Ring[ValueEntry] = field(repr=False)
    queue_depth: int | None = None
    current_turn: str | None = None
    current_tool: str | None = None
    context_queue: Capacity | None = None
    context_pool: Capacity | None = None
    # What a feeder that reaches into the agent's process sends of its queue and
    # context (``None``: not known; only depth and sizes are, then).
    queued: tuple[QueuedTurn, ...] | None = None
    queued_more: int = 0  # waiting turns past those listed
    context: ContextContents | None = None
    turns: Ring[TurnEntry] = field(default_factory=lambda: Ring(0), repr=False)  # its last
    local: str = ""  # its id within its service (the feeder's), for eviction
    # When it was seen gone while its process lives on (in-process: it left the
    # registry); listed after the others, in the order they left, until cleared.
    unregistered_at: float | None = None
    # What a feeder that reads its agents live saw it doing at its last drain (in
    # process: paused or running, as the agent says), over what its records left in
    # ``phase``; ``None``: not read live.
    live_phase: str | None = None
    # Its turns are not reported to this dashboard (a mailbox heard of only in Redis):
    # its counts are unknown, not zero (`unseen_turns`).
    turns_unseen: bool = False
    # Its calls per tool, from the tool spans of its runs (another framework's agent;
    # at most `TOOLS_KEPT` names, the calls of any other counted under `OTHER_TOOLS`).
    tools: dict[str, ToolTally] = field(default_factory=dict, repr=False)
    conversation: str | None = None  # the conversation its last run belonged to

    def tool(self, name: str) -> ToolTally:
        """The tally of ``name`` (past `TOOLS_KEPT` names: of `OTHER_TOOLS`)."""
        tools = self.tools
        found = tools.get(name)
        if found is None:
            if len(tools) >= TOOLS_KEPT:
                name = OTHER_TOOLS
            found = tools.setdefault(name, ToolTally())
        return found

    @property
    def state(self) -> str:
        service = self.service
        if service.ended or service.stale:
            return "ended" if service.ended else "stale"
        return self.live_phase or self.phase

    @property
    def gone(self) -> bool:
        """When its process said goodbye (ended normally), or it left while its
        process lives on: listed, with its totals, until cleared. A process that just
        stops sending keeps its agents, stale."""
        return self.service.ended or self.unregistered_at is not None


@dataclass(slots=True, eq=False)
class TurnEntry(TurnFacts):
    """A turn seen through its live records and/or its span: what every source knows
    of a turn (`TurnFacts`) and the ids and previews its sender stamped; satisfies
    `TurnRow`."""

    key: str
    uuid: str
    service: ServiceState = field(repr=False)
    agent_label: str
    span_id: str | None = None
    parent_id: str | None = None  # the turn span's parent (the agent-run span)
    start_ns: int = 0  # the sender's clock, for exact durations
    args_preview: str | None = None
    output_preview: str | None = None
    tags: tuple[str, ...] = ()
    # Its start record said it does not stream, so what it returns counts as its one
    # value, as the in-process source counts it (a sender counts streamed values only;
    # a turn known from its span alone is not known not to stream, and is not counted);
    # unless its span or end record said it returned no value (a turn or a context item
    # its run routed, a completion check's verdict): then False, whatever comes later.
    # ``None``: not known yet.
    returns: bool | None = None
    # What its spans say it did, another framework's run: its tool and model calls and
    # their tokens, as labelled lines for the inspector (set when its span arrives).
    steps: tuple[tuple[str, str], ...] = ()
    # Its tokens are credited from its own model calls (`Store.credit_steps`), not by
    # claiming its trace whole: another framework's run, whose trace may hold others'.
    steps_credited: bool = False

    @property
    def stale(self) -> bool:
        return self.ended is None and self.service.stale

    def hook_events(self) -> tuple[LogEntry, ...]:
        """None kept: a fleet's turns have their spans (the in-process feeder's turns
        keep theirs, `TurnRecord`)."""
        return ()

    def details(self) -> list[tuple[str, str]]:
        lines = [("service", self.service.label), ("turn", self.uuid)]
        if self.trace_id:
            lines.append(("trace", self.trace_id))
        if self.span_id:
            lines.append(("span", self.span_id))
        if self.args_preview is not None:
            lines.append(("arguments", self.args_preview))
        if self.output_preview is not None:
            lines.append(("output", self.output_preview))
        if self.tags:
            lines.append(("tags", ", ".join(self.tags)))
        if self.conversation is not None:
            lines.append(("conversation", self.conversation))
        lines.extend(self.steps)
        return lines
