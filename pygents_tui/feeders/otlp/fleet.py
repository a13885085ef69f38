"""The fleet model: what ``pygents-tui listen`` knows about every process sending to it.

Services are keyed by ``service.name`` and instance (``service.instance.id``, else
host and pid), so two processes that both run a ``planner`` stay apart; agents by
``gen_ai.agent.id`` within their service; turns by ``pygents.turn.uuid``. Live
records (the OTel events ``pygents_otel`` sends while things run) open turns, count
values and carry queue depths and context sizes; spans close turns when no record
did, and every span, pygents' own or not, goes to the trace store.

Ingestion, on the receiver's path, is an append to a byte-bounded inbox. The feeder
holds the dashboard's one store (``fleet.store``, a `pygents_tui.state.Store`: the
tables, their bounds, staleness and the read API the app reads) and is its `Feeder`:
the UI drains the store on a timer, and the store asks this feeder to fold its inbox
into it (`Folding`). The feeder is not a store.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping

from pygents_tui.feeders.otlp.folding import Folding
from pygents_tui.feeders.traces import TraceStore
from pygents_tui.listen.decode import Batch, cut_middle
from pygents_tui.state import (
    ACTION_NEEDS,
    Action,
    AgentEntry,
    Capabilities,
    Feeder,
    Panel,
    Reply,
    ServiceState,
    Sources,
    Store,
    StoreLimits,
)
from pygents_tui.text._plural import counted

__all__ = ["CAPABILITIES", "FOREIGN", "FleetLimits", "FleetModel", "OtlpSource"]

FleetLimits = StoreLimits  # the name the store's bounds had when only the fleet had them

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

_FOREIGN_SENDS = "another framework's agent sends spans only (no pygents live records)"
FOREIGN = Capabilities(
    {
        "pause": f"read-only: {_FOREIGN_SENDS}; nothing here can pause or resume it",
        "queue_contents": f"no queue: {_FOREIGN_SENDS}; its runs show as turns",
        "context_items": f"no context items: {_FOREIGN_SENDS}",
        "program_output": CAPABILITIES.lacking["program_output"],
    }
)
"""What another framework's agent offers: its runs, tools and tokens, from its spans."""


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
        if found.service.framework is not None:
            return FOREIGN
        offered = CAPABILITIES
        if found.queued is not None:
            offered = offered.gains("queue_contents")
        if found.context is not None:
            offered = offered.gains("context_items")
        return offered

    def act(self, action: Action, agent: str) -> Reply:
        need = ACTION_NEEDS[action]
        return Reply(CAPABILITIES.why_not(need) or f"{need} is not offered here", True)


class FleetModel(Feeder):
    """See the module docstring. ``clock`` (monotonic seconds) and ``wall`` (Unix
    nanoseconds) are injectable for deterministic tests; ``arrived`` is set by every
    ingestion, so a waiter wakes up instead of polling."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], int] = time.time_ns,
        *,
        stale_after: float = 5.0,
        limits: FleetLimits | None = None,
        store: Store | None = None,
    ) -> None:
        # The store this feeder writes: what the dashboard reads. One given (a replay's,
        # on a seek) is emptied first, keeping its bounds and clock (``clock``,
        # ``stale_after`` and ``limits`` are then the store's).
        if store is None:
            limits = limits if limits is not None else FleetLimits()
            traces = TraceStore(max_bytes=limits.trace_bytes, max_spans=limits.trace_spans)
            store = Store(limits, traces, clock, stale_after=stale_after)
        else:
            limits = store.limits
            traces = TraceStore(max_bytes=limits.trace_bytes, max_spans=limits.trace_spans)
            store.reset(traces)
        self.store = store
        self.store.feeder = self
        self.traces = traces
        self.folding = Folding(self.store, traces)
        # Which service and agent an item is about (also asked by the Redis feeder).
        self.services = self.folding.services
        self.wall = wall
        self.arrived = asyncio.Event()
        self.last_rejection: str | None = None
        self._inbox: deque[tuple[Batch, float, int]] = deque()
        self._pending = 0
        self._folding: Iterator[None] | None = None  # the request a budget stopped in
        # Where a program sends to reach here, each endpoint with its protocol
        # (``listen_app`` knows where it listens): the empty panels say it, so that a
        # first run shows what to do next. ``None``: no OTLP port is open.
        self.send_here: str | None = None
        # What the receiver answered the last OTLP/HTTP request sent to its gRPC port
        # (the port to use): shown above the agents table from then on, since such a
        # sender sees nothing here otherwise.
        self.misdirected: str | None = None
        self.store.sources = Sources(OtlpSource(self.store.agents))
        # By agent key: what a source of truth that also feeds an OTLP agent's row (a
        # Redis mailbox served by that agent's process) says of it, ``(paused,
        # waiting)``: applied again after every fold, so that a record never
        # overrides it (`hold`). Set by `pygents_tui.feeders.redis.store`.
        self.held: dict[str, tuple[bool, int]] = {}
        # By source: what a source that is failing says (``cannot reach Redis at …``),
        # shown above the agents table for as long as it fails.
        self.trouble: dict[str, str] = {}

    # -- the receiver's side: cheap, never raises --------------------------------------------

    def ingest(self, batch: Batch) -> None:
        """Queue one decoded request for the next drain. Over the byte budget, the
        oldest waiting batches are dropped (counted): fresh data matters more."""
        if batch.rejected:
            self.store.counts["rejected"] += batch.rejected
            self.last_rejection = f"{batch.signal}: {batch.reason}"
        if not batch.items:
            return
        self._inbox.append((batch, self.store._clock(), self.wall()))
        self._pending += batch.size
        while self._pending > self.store.limits.pending_bytes and len(self._inbox) > 1:
            old, _, _ = self._inbox.popleft()
            self._pending -= old.size
            self.store.counts["dropped"] += old.items
        self.arrived.set()

    def reject(self, signal: str, kind: str, reason: str) -> None:
        """A request the receiver could not accept (``kind``: ``malformed``,
        ``too_large``, ``unsupported``, ``refused`` or ``misdirected``): counted, never
        stored."""
        self.store.counts[kind] += 1
        self.last_rejection = f"{signal}: {cut_middle(reason, 200)}"
        if kind == "misdirected":
            self.misdirected = cut_middle(reason, 200)
        self.arrived.set()

    # -- folding, on the UI's timer, in slices ---------------------------------------------

    def fold(self, budget: float | None = None) -> bool:
        """Fold the batches that arrived (the store's `drain` calls this first). With
        a ``budget`` (seconds), stop between two items once it is spent; the rest
        waits (`backlog`), the request under way resumed where it stopped."""
        deadline = None if budget is None else time.perf_counter() + budget
        inbox = self._inbox
        changed = False
        while self._folding is not None or inbox:
            if self._folding is None:
                if changed and deadline is not None and time.perf_counter() >= deadline:
                    break  # the next request waits, once something was folded
                batch, mono, wall = inbox.popleft()
                self._pending -= batch.size
                self._folding = self.folding.steps(batch, mono, wall)
            changed = True
            steps, self._folding = self._folding, None  # a step that raises ends its request
            if deadline is None:
                for _ in steps:
                    pass
                continue
            for _ in steps:
                if time.perf_counter() >= deadline:
                    self._folding = steps
                    break
            if self._folding is not None:
                break
        if not self.backlog:
            self.arrived.clear()
        if changed:
            self.hold()
        return changed

    @property
    def backlog(self) -> bool:
        """Whether a fold with a budget left anything to fold."""
        return self._folding is not None or bool(self._inbox)

    def forgot(self, service: ServiceState) -> None:
        """The store removed ``service`` (asked by the store, `Feeder`)."""
        self.services.forgot(service)
        self.folding.foreign.forgot(service)

    def hold(self) -> None:
        """Put back what `held` says over what the records folded since said: a
        paused mailbox shows paused, and its depth is its waiting turns."""
        agents = self.store.agents
        for key, (paused, waiting) in self.held.items():
            agent = agents.get(key)
            if agent is not None:
                agent.live_phase = "paused" if paused else None
                agent.queue_depth = waiting

    # -- reading: what only a fleet heard over OTLP adds to the store's --------------------------

    def unavailable(self, panel: Panel, agent: str | None, note: str | None) -> str | None:
        """The store's ``note`` for ``panel``, with what only a fleet heard over OTLP
        says (asked by the store, `Feeder`)."""
        if panel == "agents" and (self.trouble or self.misdirected):
            return "; ".join(self._agents_trouble())
        if note is not None:
            return note
        if panel == "values" and self._foreign(agent):
            return f"no values: {_FOREIGN_SENDS}; a run's output, if sent, is in its trace"
        if panel == "values" and not self.store.previews_seen:
            return "values are counted; previews are sent only with content capture on"
        if panel in ("agents", "events", "timeline") and not self.store.services:
            if self.send_here is None:  # OTLP is off (a console on Redis alone), or untold
                return "nothing received yet"
            return f"nothing received yet: point any OTLP exporter at {self.send_here}"
        if panel == "running" and not self.store.services:
            return (
                "nothing received yet: a pygents program sends its running turns with "
                "pygents_otel.configure(live=True)"
            )
        if panel in ("agents", "running"):
            return self._spans_only()
        return None

    def _agents_trouble(self) -> list[str]:
        """What a failing source says, and where an OTLP/HTTP sender that used the
        gRPC port should send instead, with how many of its requests were refused."""
        said = list(self.trouble.values())
        if self.misdirected is not None:
            refused = counted(self.store.counts["misdirected"], "request")
            said.append(f"{self.misdirected} ({refused} refused)")
        return said

    def _foreign(self, agent: str | None) -> bool:
        found = self.store.agents.get(agent) if agent is not None else None
        return found is not None and found.service.framework is not None

    def _spans_only(self) -> str | None:
        """Which services sent no live record yet, per service: one that sends them
        must not hide another whose running agents show as idle for want of them.
        Another framework's senders cannot send them: they are told apart, and told
        nothing of pygents' live mode."""
        services = self.store.services.values()
        quiet = sorted(s.label for s in services if not s.live and s.framework is None)
        if not quiet:
            foreign = sorted(s.label for s in services if s.framework is not None)
            if not foreign:
                return None
            return f"{_named(foreign)}: another framework's agents, read from their spans alone"
        effect = "turns show when their spans end (turn live mode on)"
        if len(quiet) == len(self.store.services):
            return f"no live records yet: {effect}"
        return f"no live records yet from {_named(quiet)}: its {effect}"

    def counters(self, counts: dict[str, int]) -> dict[str, int]:
        """The store's counters (``counts``) and this feeder's: the items waiting to
        fold, and how many service names its processes (``services``: one per
        instance) run."""
        counts["pending"] = sum(b.items for b, _, _ in self._inbox)
        counts["service_names"] = len({name for name, _ in self.store.services})
        return counts


def _named(labels: list[str]) -> str:
    """Up to three labels, and how many more."""
    return ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
