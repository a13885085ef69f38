"""When a recorded request arrived: what a replay paces by.

Live, the listener stamps each request with its own clock on arrival, and the
fleet model corrects each sender's clock against it (`SenderClock`: a sender whose
times are off ours by more than ``clock_trust`` has its offset taken out). A
recording keeps only the senders' own times, but it is written in arrival order,
and that order is what tells a wrong clock from a real gap: a request that says it
was sent long after the requests recorded *after* it cannot have been; its sender's
clock is ahead. Such a request arrived when the recording was where it is (the
replay plays it at once, and the model, fed the replay's position as the arrival
time, corrects that sender's clock exactly as it does live). One request stamped 30
years ahead among normal ones then plays in its place instead of holding back every
request after it, and does not stretch the recording to 262,800 hours.

A request whose time is after the ones before it but agrees with the ones after it
is a real gap: the recording was idle. A gap longer than `IDLE_GAP` is skipped, not
waited through (a night between two runs plays on at once), and the replay says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["AHEAD", "IDLE_GAP", "IDLE_GAP_NS", "idle_text", "plausible"]

IDLE_GAP: Final = 60.0
"""Seconds of recording without a request past which a replay skips to the next one
(and says so): longer than any pause worth watching in real time, shorter than the
breaks between a fleet's runs."""
IDLE_GAP_NS: Final = int(IDLE_GAP * 1e9)
AHEAD: Final = 8
"""Requests read ahead to judge one's time (the replay holds that many, each at most
the reader's line bound): a sender's clock that is wrong for fewer than half of
them is told apart."""


def plausible(own: int, after: Sequence[int]) -> bool:
    """Whether a request's time ``own`` (Unix ns) can be when it was sent, given the
    times of the requests recorded after it (0: none): not when it is past most of
    them by more than `IDLE_GAP` (their median, so that one more wrong clock among
    them does not decide)."""
    later = sorted(t for t in after if t)
    if not own or not later:
        return True
    return own <= later[len(later) // 2] + IDLE_GAP_NS


def idle_text(ns: int) -> str:
    """A skipped stretch as the status line says it: ``8h12m``, ``3m05s``."""
    seconds = max(ns, 0) // 1_000_000_000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"
