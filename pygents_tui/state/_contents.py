"""The bounds on an agent's queue and context contents, whichever feeder sets them.

In-process they are read from the live agent; from another process they arrive over
the network, where nothing else bounds them. Either way the panels list at most
`QUEUE_SHOWN` waiting turns and `POOL_SHOWN` pool items, each field cut to a width,
and count what was left out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Final

from pygents_tui.state._view import Capacity, ContextContents
from pygents_tui.text._cut import cut_middle

__all__ = ["POOL_SHOWN", "QUEUE_SHOWN", "QueuedTurn", "bounded_context", "bounded_queue"]

QUEUE_SHOWN: Final = 200  # waiting turns listed by the queue panel
POOL_SHOWN: Final = 30  # the pool's newest items listed by the context panel
_QUEUE_ITEMS: Final = 200  # items of a context queue window listed

QueuedTurn = tuple[str, str, str, str]
"""A waiting turn as the queue panel lists it: position, tool, arguments, timeout."""


def bounded_queue(rows: Iterable[QueuedTurn], more: int) -> tuple[tuple[QueuedTurn, ...], int]:
    """The first `QUEUE_SHOWN` of ``rows`` with each field cut to its width, and how
    many more wait (``more``, plus the rows left out)."""
    listed: list[QueuedTurn] = []
    left_out = 0
    for row in rows:
        if len(listed) < QUEUE_SHOWN:
            position, tool, arguments, timeout = row
            listed.append(
                (
                    cut_middle(position, 8),
                    cut_middle(tool, 64),
                    cut_middle(arguments, 200),
                    cut_middle(timeout, 16),
                )
            )
        else:
            left_out += 1
    return tuple(listed), max(more, 0) + left_out


def bounded_context(context: ContextContents) -> ContextContents:
    """``context`` with at most `_QUEUE_ITEMS` queue items and `POOL_SHOWN` pool items
    (the newest), each cut to a width."""
    pool: Sequence[tuple[str, str, str]] = context.pool_items[-POOL_SHOWN:]
    return ContextContents(
        queue=Capacity(max(context.queue.size, 0), context.queue.limit),
        queue_items=tuple(
            cut_middle(item, 200) for item in islice(context.queue_items, _QUEUE_ITEMS)
        ),
        pool=Capacity(max(context.pool.size, 0), context.pool.limit),
        pool_items=tuple(
            (cut_middle(i, 64), cut_middle(d, 100), cut_middle(c, 100)) for i, d, c in pool
        ),
    )
