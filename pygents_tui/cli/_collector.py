"""The garbage collector's pace in a process that is the dashboard (``pygents-tui
listen``), not a program the dashboard watches from inside.

A fleet's records live a refresh (up to 50 ms) between their arrival and the
drain that folds them, and the screen's caches churn as fast: at CPython's default
pace (a young collection every 700 new objects) most of them outlive two young
collections and are promoted to the oldest generation, which is then collected in
full several times a second. Measured under W12 (2,000 agents, 2,000 turns a
second): 16 full collections in 10 s, 110–290 ms each, the event loop stopped
throughout, and those pauses were most of the 95th percentile of a turn's time to
the screen. Young collections every `YOUNG` new objects let those objects die
young: no full collection in the same 10 s, each young one a few milliseconds.
Cyclic garbage is still collected, a little later; the rest is freed as ever, by
reference counting.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG", "paced_collector"]

YOUNG = 20_000


@contextmanager
def paced_collector() -> Iterator[None]:
    """Collect the youngest generation every `YOUNG` new objects while inside (never
    more often than the process already does: a pace chosen by hand is kept), as
    the process had it afterwards."""
    before = gc.get_threshold()
    young, middle, old = before
    if 0 < young < YOUNG:
        gc.set_threshold(YOUNG, middle, old)
    try:
        yield
    finally:
        gc.set_threshold(*before)
