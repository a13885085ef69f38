"""The dashboard's view of a replay: the fleet model of ``pygents-tui listen``,
fed from a recording instead of the receiver.

`ReplayView` is what the dashboard reads (`DashboardView`). It hands every read
to the replay's current fleet model, which a seek replaces with a fresh one, so
the dashboard keeps one view however often the user seeks; ``drain`` first plays
what is due (`Replay.advance`), as the receiver would have delivered it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Self

from pygents_tui.feeders.otlp.fleet import FleetModel
from pygents_tui.feeders.replay._replay import Replay
from pygents_tui.recording._clock import idle_text
from pygents_tui.recording._reader import Recording
from pygents_tui.state import (
    Action,
    Capabilities,
    ContextContents,
    DashboardView,
    Meters,
    Panel,
    Reply,
    Sources,
    TraceTree,
)

if TYPE_CHECKING:
    from pygents.redis import MailboxStats
    from pygents_tui.state import AgentRow, EventRow, TurnRow, ValueRow
    from pygents_tui.state._stuck import Stuck
    from pygents_tui.state._usage import BudgetPassed, Usage

__all__ = ["ReplayView"]

_NOT_LIVE = "a replay shows what was recorded: it cannot pause agents (space pauses the replay)"


class ReplayView:
    """See the module docstring. ``stale_after`` is the fleet model's, in recorded
    seconds; ``clock`` paces the replay (injectable for tests)."""

    def __init__(
        self,
        recording: Recording,
        *,
        clock: Callable[[], float] = time.monotonic,
        speed: float = 1.0,
        stale_after: float = 5.0,
        warmup: float = 30.0,
        warmup_bytes: int = 512 * 1024,
        budget: int = 200,
    ) -> None:
        self._stale_after = stale_after
        self._meters = Meters()
        self.fleet: FleetModel | None = None
        self.replay = Replay(
            recording,
            self._new_fleet,
            clock=clock,
            speed=speed,
            warmup=warmup,
            warmup_bytes=warmup_bytes,
            budget=budget,
        )
        self.sources = Sources(_Replayed(self))
        self._version: int = 0
        self._seen: tuple[int, int, int, bool, bool, float, tuple[int, int] | None] | None = None

    def _new_fleet(self, clock: Callable[[], float], wall: Callable[[], int]) -> FleetModel:
        self.fleet = FleetModel(clock, wall, stale_after=self._stale_after)
        self.fleet.store.configure_meters(self._meters)
        return self.fleet

    @property
    def model(self) -> FleetModel:
        assert self.fleet is not None  # built by the replay on construction
        return self.fleet

    # -- playing ---------------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    def drain(self) -> bool:
        """Play what is due, then fold it. True when anything shown changed: the
        model, or the replay's own state (position, speed, pause, a new model)."""
        replay = self.replay
        replay.advance()
        changed = self.model.store.drain()
        state = (
            replay.generation,
            replay.position_ns // 100_000_000,  # the status line shows tenths of seconds
            self.model.store.version,
            replay.paused,
            replay.ended,
            replay.speed,
            replay.last_skip,
        )
        if state != self._seen:
            self._seen = state
            changed = True
        if changed:
            self._version += 1
        return changed

    def status(self) -> str:
        """One line: where the replay is, of how long, at what speed, and its state."""
        replay = self.replay
        position = _clock_time(replay.position_ns - replay.start_ns)
        length = _clock_time(replay.end_ns - replay.start_ns)
        if replay.ended:
            state = "end of recording"
        elif replay.paused:
            state = "paused"
        else:
            state = "playing"
        skipped = replay.last_skip
        if skipped is not None:
            state += f" · skipped {idle_text(skipped[1])} idle"
        return f"replay {position} / {length} · {replay.speed:g}× · {state}"

    # -- DashboardView: the current fleet model's, with the replay's clock ---------------

    @property
    def label_width(self) -> int:
        return self.model.store.label_width

    @property
    def wall_clock(self) -> Callable[[float], datetime] | None:
        """The recording's times are the senders' own: shown as UTC dates."""
        return _utc

    @property
    def clock(self) -> Callable[[], float]:
        return self.replay.model_clock

    @property
    def epoch(self) -> float:
        """The recording's start: times show as seconds into the recording."""
        return self.replay.start_ns / 1e9

    def start(self) -> None:
        """Nothing to start: the dashboard's refresh timer drives the replay."""

    def close(self) -> None:
        self.replay.recording.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def queued_turns(self, agent: str) -> Sequence[tuple[str, str, str, str]]:
        return self.model.store.queued_turns(agent)

    def context_contents(self, agent: str) -> ContextContents | None:
        return self.model.store.context_contents(agent)

    def mailboxes(self) -> Mapping[str, MailboxStats]:
        return self.model.store.mailboxes()

    def finished_count(self) -> int:
        return self.model.store.finished_count()

    def clear_finished(self) -> int:
        count = self.model.store.clear_finished()
        self._version += 1
        return count

    def agent_rows(self) -> Sequence[AgentRow]:
        return self.model.store.agent_rows()

    def agent_row(self, key: str) -> AgentRow | None:
        return self.model.store.agent_row(key)

    def running_turns(self, agent: str | None = None) -> Sequence[TurnRow]:
        return self.model.store.running_turns(agent)

    def recent_turns(self, agent: str | None = None) -> Sequence[TurnRow]:
        return self.model.store.recent_turns(agent)

    def value_tail(self, agent: str) -> tuple[int, Sequence[ValueRow]]:
        return self.model.store.value_tail(agent)

    def event_log(self) -> tuple[int, Sequence[EventRow]]:
        return self.model.store.event_log()

    def find_turn(self, key: str) -> TurnRow | None:
        return self.model.store.find_turn(key)

    def trace_tree(self, trace_id: str) -> TraceTree | None:
        return self.model.store.trace_tree(trace_id)

    def unavailable(self, panel: Panel, agent: str | None = None) -> str | None:
        """The fleet's notes, except its "send here" hint, which a file cannot act on."""
        if panel in ("agents", "running", "events", "timeline") and not self.model.store.services:
            return "nothing recorded up to this point of the replay"
        note = self.sources.of(agent).panel_note(panel)
        return note if note is not None else self.model.store.unavailable(panel, agent)

    def counters(self) -> Mapping[str, int]:
        counts = dict(self.model.store.counters())
        for kind, count in self.replay.recording.drops.items():
            counts[f"recording_{kind}"] = count
        return counts

    # -- attention: the current fleet model's; a seek makes a new one, configured alike --

    def configure_meters(self, meters: Meters) -> None:
        """See `Store.configure_meters`: kept for every fleet model a seek makes."""
        self._meters = meters
        self.model.store.configure_meters(meters)

    def stuck_turns(self) -> Sequence[Stuck]:
        return self.model.store.stuck_turns()

    def stuck_turn(self, key: str) -> Stuck | None:
        return self.model.store.stuck_turn(key)

    def awaiting_takeover(self) -> Mapping[str, int]:
        return self.model.store.awaiting_takeover()

    def usage(self, agent: str | None = None) -> Usage | None:
        return self.model.store.usage(agent)

    def service_usage(self, service: str) -> Usage | None:
        return self.model.store.service_usage(service)

    def priced(self) -> bool:
        return self.model.store.priced()

    def budget_news(self) -> list[BudgetPassed]:
        return self.model.store.budget_news()

    def over_budget(self) -> frozenset[str]:
        return self.model.store.over_budget()


class _Replayed:
    """The replay as the one `Source` of its view: what the current fleet model was
    sent, less control (a file cannot pause anyone). The model changes with every
    seek, so it is looked up at each question."""

    def __init__(self, view: ReplayView) -> None:
        self._view = view

    def serves(self, agent: str) -> bool:
        return True

    def capabilities(self, agent: str | None) -> Capabilities:
        return self._view.model.store.sources.of(agent).lacks("pause", _NOT_LIVE)

    def act(self, action: Action, agent: str) -> Reply:
        return Reply(_NOT_LIVE, warning=True)


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _clock_time(ns: int) -> str:
    seconds = max(ns, 0) // 1_000_000_000
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


# The replay view is a DashboardView (checked by mypy, free at run time).
_VIEW: type[DashboardView] = ReplayView
