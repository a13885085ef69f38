"""Playing a recording back into a dashboard model, on a clock the caller injects.

`Replay` reads requests from a `Recording` and hands each to the model exactly as
the receiver does: `decode`, then ``ingest(batch)``. The model's own clocks are
the replay's (``clock``: the recording's time in seconds, ``wall``: the same in
Unix nanoseconds), so a request arrives at the time it was sent, whatever the
speed, and a service goes stale after the same stretch of recorded silence as it
did live.

Time moves with the injected ``clock`` times ``speed`` (1× to 100×) while playing,
and not at all while paused. Each `Replay.advance` folds in what is due, at most
``budget`` requests (the dashboard advances 20 times a second, and decoding a
request takes up to a millisecond: 200 keeps a refresh near a tenth of a second):
a replay too fast for the machine falls behind (its position says where it really
is) instead of piling up work or freezing the screen.

Seeking builds a fresh model, since a model cannot be run backwards: it replays
the stretch before the target without pacing (a warm-up: the last ``warmup``
seconds, or the last ``warmup_bytes`` of requests if that is less), found from the
nearest index point (`Recording.seek_time`), so that the agents active around the
target are there with their latest state. What happened before the warm-up is not
replayed: a turn started earlier shows once its next record, snapshot or span
arrives. Replaying from the start of the file instead would make a seek an hour
in cost the whole hour; the byte bound keeps a seek's cost the same for a busy
fleet as for a quiet one. A short jump forward (within the warm-up) reads on.

A request plays when it arrived (`pygents_tui.recording._clock`): its own time,
unless the requests recorded after it say its sender's clock is ahead, when it
plays in its place at once. A stretch of more than `IDLE_GAP` seconds with no
request is skipped while playing (not while seeking, which plays no time), and
`last_skip` says how long it was, for the status line.
"""

from __future__ import annotations

import math
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Final, Protocol

from pygents_tui.listen.decode import Batch, Limits, Malformed, decode
from pygents_tui.recording._clock import AHEAD, IDLE_GAP_NS, plausible
from pygents_tui.recording._reader import Line, Recording

__all__ = ["MAX_SPEED", "SPEEDS", "Model", "ModelFactory", "Replay"]

SPEEDS: Final = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
MAX_SPEED: Final = SPEEDS[-1]
_NS: Final = 1_000_000_000


class Model(Protocol):
    """What a replay feeds: the receiver's sink side of the fleet model."""

    def ingest(self, batch: Batch) -> None: ...

    def reject(self, signal: str, kind: str, reason: str) -> None: ...


ModelFactory = Callable[[Callable[[], float], Callable[[], int]], Model]
"""Builds a fresh model on the replay's clocks (``clock`` seconds, ``wall`` ns)."""


class Replay:
    """See the module docstring. ``model`` is the current one (a seek replaces it;
    ``generation`` counts how many were built)."""

    def __init__(
        self,
        recording: Recording,
        make_model: ModelFactory,
        *,
        clock: Callable[[], float] = time.monotonic,
        speed: float = 1.0,
        warmup: float = 30.0,
        warmup_bytes: int = 512 * 1024,
        budget: int = 200,
        limits: Limits | None = None,
    ) -> None:
        self.recording = recording
        self._make_model = make_model
        self._clock = clock
        self.speed = clamp_speed(speed)
        self.warmup_ns = int(warmup * _NS)
        self.warmup_bytes = warmup_bytes
        self.budget = budget
        self.limits = limits if limits is not None else Limits()
        self.drops: Counter[str] = Counter()  # requests the decoder refused, by kind
        self.requests = 0  # requests played since the last model was built
        self.paused = False
        self.ended = False
        self.generation = 0
        self._now_ns = recording.first_ns  # the model's "now": the replay's position
        self._anchor_ns = self._now_ns  # the position at _anchor_clock
        self._anchor_clock = clock()
        self._ahead: deque[Line] = deque()  # read, not yet played: the next, then AHEAD more
        self._arrived_ns = self._now_ns  # when the last request played arrived
        self._latest_ns = self._now_ns  # the latest of those
        self.last_skip: tuple[int, int] | None = None  # (where, how long) of the last idle skip
        self.model = self._fresh()

    # -- the model's clocks --------------------------------------------------------------

    def model_clock(self) -> float:
        return self._now_ns / _NS

    def model_wall(self) -> int:
        return self._now_ns

    @property
    def position_ns(self) -> int:
        return self._now_ns

    @property
    def start_ns(self) -> int:
        return self.recording.first_ns

    @property
    def end_ns(self) -> int:
        return max(self.recording.last_ns, self.recording.first_ns, self._latest_ns)

    # -- playing -------------------------------------------------------------------------

    def target_ns(self) -> int:
        """Where the replay should be now: the anchor moved on by the clock."""
        if self.paused or self.ended:
            return self._anchor_ns
        moved = (self._clock() - self._anchor_clock) * self.speed
        return self._anchor_ns + int(max(moved, 0.0) * _NS)

    def advance(self) -> int:
        """Play what is due now (at most ``budget`` requests); how many were played."""
        target = self.target_ns()
        skips = self.last_skip
        played = self._play_until(target, self.budget, skip_idle=True)
        if self.last_skip is not skips:
            target = self._anchor_ns  # it skipped an idle stretch: on from its end
        if self.ended:
            self._anchor(self._now_ns)
        elif played >= self.budget:
            self._anchor(self._now_ns)  # behind: go on from where it really is
        else:
            self._now_ns = max(self._now_ns, target)
        return played

    def _play_until(self, target: int, budget: int | None, *, skip_idle: bool = False) -> int:
        played = 0
        ahead = self._ahead
        while budget is None or played < budget:
            while len(ahead) <= AHEAD and (read := self.recording.read()) is not None:
                ahead.append(read)
            if not ahead:
                self.ended = True
                break
            arrived = self._arrival(ahead)
            if arrived > target:
                if not (skip_idle and arrived - self._arrived_ns > IDLE_GAP_NS):
                    break
                self.last_skip = (arrived, arrived - max(self._now_ns, self._arrived_ns))
                self._anchor(arrived)
                target = arrived
            line = ahead.popleft()
            self._now_ns = max(self._now_ns, arrived)
            # (a sender whose clock is behind plays at once, and starts no idle stretch)
            self._arrived_ns = max(self._arrived_ns, arrived)
            self._latest_ns = max(self._latest_ns, arrived)
            self._ingest(line)
            played += 1
        return played

    def _arrival(self, ahead: deque[Line]) -> int:
        """When the next request arrived (`pygents_tui.recording._clock`): its own
        time, or now (the replay's position) when it has none or the requests
        after it say its sender's clock is ahead."""
        own = ahead[0].time_ns
        if not own or not plausible(own, [line.time_ns for line in list(ahead)[1:]]):
            return self._now_ns
        return own

    def _ingest(self, line: Line) -> None:
        """The receiver's path for one request: decode, then ingest (or count)."""
        self.requests += 1
        try:
            batch = decode(line.signal, line.data, json_body=True, limits=self.limits)
        except Malformed as exc:
            kind = "too_large" if exc.status == "too_large" else "malformed"
            self.drops[kind] += 1
            self.model.reject(line.signal, kind, f"recording at byte {line.offset}: {exc}")
            return
        self.model.ingest(batch)

    # -- controls ------------------------------------------------------------------------

    def toggle_pause(self) -> bool:
        """Pause or resume; whether it is paused now."""
        self._anchor(self.target_ns() if not self.paused else self._anchor_ns)
        self.paused = not self.paused
        return self.paused

    def set_speed(self, speed: float) -> float:
        """Change speed from here on (clamped to 1×–100×); the speed set."""
        self._anchor(self.target_ns())
        self.speed = clamp_speed(speed)
        return self.speed

    def faster(self) -> float:
        return self.set_speed(next((s for s in SPEEDS if s > self.speed), MAX_SPEED))

    def slower(self) -> float:
        return self.set_speed(next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0]))

    def seek(self, time_ns: int) -> None:
        """Go to ``time_ns`` (clamped to the recording): read on for a short jump
        forward (within the warm-up's seconds and bytes), else rebuild the model from
        the warm-up before it (module docstring)."""
        target = min(max(time_ns, self.start_ns), self.end_ns)
        recording = self.recording
        here = recording.bookmark()
        recording.seek_time(target)
        end_offset = recording.offset
        near = self._now_ns <= target <= self._now_ns + self.warmup_ns
        if near and not self.ended and end_offset - here[0] <= self.warmup_bytes:
            recording.restore(here)  # a short jump forward: read on from here
        else:
            self.model = self._fresh()
            begin = max(target - self.warmup_ns, self.start_ns)
            recording.seek_time(begin)
            if end_offset - recording.offset > self.warmup_bytes:
                recording.seek_offset(end_offset - self.warmup_bytes)
            self._ahead.clear()
            self._now_ns = self._arrived_ns = begin
            self.last_skip = None
            self._skip_before(begin)
        self._play_until(target, None)
        self._now_ns = max(self._now_ns, target)
        self._anchor(self._now_ns)

    def seek_by(self, seconds: float) -> None:
        self.seek(self._now_ns + int(seconds * _NS))

    def _skip_before(self, begin: int) -> None:
        """Read past the requests older than ``begin`` without decoding them."""
        while True:
            line = self.recording.read()
            if line is None:
                return
            if line.time_ns >= begin:
                self._ahead.append(line)
                return

    def _anchor(self, position_ns: int) -> None:
        self._anchor_ns = position_ns
        self._anchor_clock = self._clock()

    def _fresh(self) -> Model:
        self.generation += 1
        self.requests = 0
        self.ended = False
        return self._make_model(self.model_clock, self.model_wall)


def clamp_speed(speed: float) -> float:
    if math.isnan(speed):
        return SPEEDS[0]
    return min(max(float(speed), SPEEDS[0]), MAX_SPEED)
