"""Stuck and orphaned work: which running turns an operator should look at, and why.

A turn's timeout is a hard limit that is often generous; what an operator wants to
see earlier is a turn far slower than its tool usually is. So `StuckWatch` learns
each tool's recent durations from the turns that completed (a bounded window per
tool, a bounded number of tools) and flags a running turn once it has run past
``factor`` times its tool's recent p95. A tool seen fewer than ``min_samples`` times
has no p95 yet: a guess from three samples would flag half the fleet.

Two other shapes are flagged whatever the history: a streaming turn whose value
count has not moved for ``silence`` seconds (it may be waiting on something that
will never answer), and a turn of a process marked stale (``TurnRow.stale``: nobody
will finish it, it is orphaned). With Redis mailboxes, `awaiting_takeover` counts
the entries a dead worker still holds, which a live one claims once they have been
idle for its claim time.

Everything is on the model's clock (``now`` is passed in), memory is bounded by the
constructor's limits, and a call costs O(running turns): the p95 of a tool is
computed once per new sample, not per turn per refresh.
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from pygents import StopReason
from pygents_tui.state._texts import ORPHANED, silent, slow
from pygents_tui.state._view import TurnRow

if TYPE_CHECKING:
    from pygents.redis import MailboxStats  # a type only: the dashboard never imports it

__all__ = [
    "DEFAULT_FACTOR",
    "DEFAULT_SILENCE",
    "Stuck",
    "StuckWatch",
    "awaiting_takeover",
    "next_stuck",
]

DEFAULT_FACTOR: Final = 3.0  # [stuck] factor
DEFAULT_SILENCE: Final = 30.0  # [stuck] silence, seconds

StuckKind = Literal["orphaned", "slow", "silent"]


@dataclass(frozen=True, slots=True)
class Stuck:
    """A running turn worth a look: its key, the most serious reason first
    (``kinds[0]``), and one line saying why."""

    key: str
    kinds: tuple[StuckKind, ...]
    text: str

    @property
    def kind(self) -> StuckKind:
        return self.kinds[0]


class _Durations:
    """One tool's recent durations and their p95, recomputed only when they change."""

    __slots__ = ("_p95", "samples")

    def __init__(self, window: int) -> None:
        self.samples: deque[float] = deque(maxlen=window)
        self._p95: float | None = None

    def add(self, seconds: float) -> None:
        self.samples.append(seconds)
        self._p95 = None

    def p95(self) -> float:
        if self._p95 is None:
            ordered = sorted(self.samples)
            # Nearest rank: the smallest sample with at least 95 % at or below it.
            self._p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
        return self._p95


class StuckWatch:
    """Learns tools' durations from ended turns; says which running turns are stuck.

    ``floor`` keeps quick tools quiet: a turn is never "slow" before it has run that
    many seconds, however small its tool's p95 (three times 20 ms is not news).
    """

    def __init__(
        self,
        *,
        factor: float = DEFAULT_FACTOR,
        silence: float = DEFAULT_SILENCE,
        min_samples: int = 10,
        window: int = 50,
        floor: float = 1.0,
        max_tools: int = 1024,
        max_tracked: int = 10_000,
    ) -> None:
        if not (math.isfinite(factor) and factor >= 1):
            raise ValueError(f"factor must be 1 or more, got {factor!r}")
        if not (math.isfinite(silence) and silence > 0):
            raise ValueError(f"silence must be a positive number of seconds, got {silence!r}")
        if min(min_samples, window, max_tools, max_tracked) < 1 or min_samples > window:
            raise ValueError("min_samples, window and the limits must be positive")
        self.factor, self.silence, self.floor = factor, silence, floor
        self.min_samples, self.window = min_samples, window
        self.max_tools, self.max_tracked = max_tools, max_tracked
        self.ignored = 0  # durations refused: negative, NaN, infinite
        self.tools_forgotten = 0  # tools evicted for a newer one past max_tools
        self._tools: OrderedDict[str, _Durations] = OrderedDict()
        self._learned: OrderedDict[str, None] = OrderedDict()  # turn keys already learned
        # A streaming turn's last value count and when it last changed, by turn key.
        self._streams: OrderedDict[str, tuple[int, float]] = OrderedDict()

    # -- learning ----------------------------------------------------------------------

    def learn(self, tool: str, seconds: float) -> bool:
        """One more duration of ``tool``; False (and counted) when it is no duration."""
        if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds >= 0):
            self.ignored += 1
            return False
        tools = self._tools
        durations = tools.get(tool)
        if durations is None:
            durations = tools[tool] = _Durations(self.window)
            if len(tools) > self.max_tools:
                tools.popitem(last=False)
                self.tools_forgotten += 1
        else:
            tools.move_to_end(tool)
        durations.add(float(seconds))
        return True

    def learn_turn(self, turn: TurnRow) -> bool:
        """Learn from an ended turn, once per turn key, if it completed: a failure's
        or a cancellation's duration says nothing about the tool's usual pace, and a
        timeout's is the timeout. True if it was learned."""
        ended = turn.ended
        if ended is None or turn.stop_reason is not StopReason.COMPLETED:
            return False
        learned = self._learned
        if turn.key in learned:
            return False
        learned[turn.key] = None
        if len(learned) > self.max_tracked:
            learned.popitem(last=False)
        self._streams.pop(turn.key, None)
        return self.learn(turn.paced_as or turn.tool, ended - turn.started)

    def p95(self, tool: str) -> tuple[float, int] | None:
        """The tool's recent p95 and how many samples it is over (``None``: fewer
        than ``min_samples`` so far)."""
        durations = self._tools.get(tool)
        if durations is None or len(durations.samples) < self.min_samples:
            return None
        return durations.p95(), len(durations.samples)

    def forget(self, key: str) -> None:
        """A turn ended: stop following its stream (the LRU bound would, later)."""
        self._streams.pop(key, None)

    # -- checking ----------------------------------------------------------------------

    def check(self, running: Iterable[TurnRow], now: float) -> list[Stuck]:
        """The running turns that are stuck at ``now``, in the order given. Pass all
        running turns: a streaming turn's silence is measured between calls."""
        found: list[Stuck] = []
        if not math.isfinite(now):
            return found
        for turn in running:
            kinds: list[StuckKind] = []
            texts: list[str] = []
            if turn.stale:
                kinds.append("orphaned")
                texts.append(ORPHANED)
            elapsed = now - turn.started
            known = self.p95(turn.paced_as or turn.tool) if math.isfinite(elapsed) else None
            if known is not None:
                p95, samples = known
                if elapsed > max(self.factor * p95, self.floor):
                    kinds.append("slow")
                    ratio = elapsed / p95 if p95 > 0 else math.inf
                    texts.append(slow(ratio, p95, samples))
            if turn.streaming:
                quiet = self._quiet(turn, now)
                if quiet >= self.silence:
                    kinds.append("silent")
                    texts.append(silent(quiet))
            if kinds:
                found.append(Stuck(turn.key, tuple(kinds), " · ".join(texts)))
        return found

    def _quiet(self, turn: TurnRow, now: float) -> float:
        """Seconds since the turn's value count last changed. A turn first seen with
        no value has been quiet since it started; one first seen with values, since
        now (when its last one came is not known)."""
        streams, key, values = self._streams, turn.key, turn.values
        seen = streams.get(key)
        if seen is None:
            since = turn.started if values == 0 and math.isfinite(turn.started) else now
            streams[key] = seen = (values, min(since, now))
            if len(streams) > self.max_tracked:
                streams.popitem(last=False)
        else:
            streams.move_to_end(key)
            if seen[0] != values:
                streams[key] = seen = (values, now)
        return now - seen[1]


def next_stuck(stuck: Sequence[Stuck], current: str | None) -> str | None:
    """The key the "next stuck turn" key jumps to from ``current``: the one after it,
    wrapping round, or the first when ``current`` is not among them."""
    if not stuck:
        return None
    keys = [item.key for item in stuck]
    if current in keys:
        return keys[(keys.index(current) + 1) % len(keys)]
    return keys[0]


def awaiting_takeover(mailboxes: Mapping[str, MailboxStats]) -> dict[str, int]:
    """Per agent key, the turns delivered to a worker that no longer heartbeats and
    not acknowledged: they wait until a live worker claims them (after its claim
    time), and are run again then. Agents with none are left out."""
    waiting: dict[str, int] = {}
    for agent, stats in mailboxes.items():
        held = sum(c.pending for c in stats.consumers if not c.live and c.pending > 0)
        if held:
            waiting[agent] = held
    return waiting
