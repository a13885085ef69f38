"""The dashboard's view of a replay: the store of ``pygents-tui listen``, fed from a
recording instead of the receiver.

`ReplayView` holds the one store the dashboard reads (``view.store``) and is its
`Feeder`: on each drain it plays what is due (`Replay.advance`), as the receiver
would have delivered it, and has the fleet feeder fold it. A seek starts a fresh
fleet feeder on the same store, which empties it (`Store.reset`): the dashboard
keeps reading one store however often the user seeks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Self

from pygents_tui.feeders.otlp.fleet import FleetModel, OtlpSource
from pygents_tui.feeders.replay._replay import Replay
from pygents_tui.recording._clock import idle_text
from pygents_tui.recording._reader import Recording
from pygents_tui.state import (
    Action,
    Capabilities,
    Feeder,
    Panel,
    Reply,
    ServiceState,
    Sources,
    Store,
)

__all__ = ["ReplayView"]

_NOT_LIVE = "a replay shows what was recorded: it cannot pause agents (space pauses the replay)"


class ReplayView(Feeder):
    """See the module docstring. ``stale_after`` is the store's, in recorded seconds;
    ``clock`` paces the replay (injectable for tests)."""

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
        self._store: Store | None = None
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
        store = self.store
        store.epoch = self.replay.start_ns / 1e9  # times show as seconds into the recording
        store.wall_clock = _utc  # the recording's times are the senders' own: UTC dates
        self._seen: tuple[int, int, bool, bool, float, tuple[int, int] | None] | None = None

    def _new_fleet(self, clock: Callable[[], float], wall: Callable[[], int]) -> FleetModel:
        """A fresh fleet feeder for the replay's first play and every seek, on the one
        store (made on the first call, with the replay's clock)."""
        self.fleet = FleetModel(clock, wall, stale_after=self._stale_after, store=self._store)
        store = self._store = self.fleet.store
        store.feeder = self
        store.sources = Sources(_Replayed(OtlpSource(store.agents)))
        return self.fleet

    @property
    def store(self) -> Store:
        """The store the dashboard reads."""
        assert self._store is not None  # made by the replay on construction
        return self._store

    @property
    def model(self) -> FleetModel:
        """The fleet feeder playing now (a seek replaces it)."""
        assert self.fleet is not None  # made by the replay on construction
        return self.fleet

    # -- the store's Feeder: playing, on the UI's timer -------------------------------------

    @property
    def backlog(self) -> bool:
        return self.model.backlog

    def fold(self, budget: float | None = None) -> bool:
        """Play what is due, then fold it (within ``budget``, as the fleet feeder
        does). True when anything shown changed: what was folded, or the replay's own
        state (position, speed, pause, a seek)."""
        replay = self.replay
        replay.advance()
        changed = self.model.fold(budget)
        state = (
            replay.generation,
            replay.position_ns // 100_000_000,  # the status line shows tenths of seconds
            replay.paused,
            replay.ended,
            replay.speed,
            replay.last_skip,
        )
        if state != self._seen:
            self._seen = state
            changed = True
        return changed

    def unavailable(self, panel: Panel, agent: str | None, note: str | None) -> str | None:
        """The fleet's notes, except its "send here" hint, which a file cannot act on."""
        if panel in ("agents", "running", "events", "timeline") and not self.store.services:
            return "nothing recorded up to this point of the replay"
        return note if note is not None else self.model.unavailable(panel, agent, None)

    def counters(self, counts: dict[str, int]) -> Mapping[str, int]:
        counts = dict(self.model.counters(counts))
        for kind, count in self.replay.recording.drops.items():
            counts[f"recording_{kind}"] = count
        return counts

    def forgot(self, service: ServiceState) -> None:
        self.model.forgot(service)

    def close(self) -> None:
        self.replay.recording.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the status line ---------------------------------------------------------------------

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


class _Replayed:
    """The replay as the one `Source` of its store: what the fleet was sent (``sent``),
    less control (a file cannot pause anyone)."""

    def __init__(self, sent: OtlpSource) -> None:
        self._sent = sent

    def serves(self, agent: str) -> bool:
        return True

    def capabilities(self, agent: str | None) -> Capabilities:
        return self._sent.capabilities(agent).lacks("pause", _NOT_LIVE)

    def act(self, action: Action, agent: str) -> Reply:
        return Reply(_NOT_LIVE, warning=True)


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _clock_time(ns: int) -> str:
    seconds = max(ns, 0) // 1_000_000_000
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
