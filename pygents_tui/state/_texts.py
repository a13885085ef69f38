"""The event log's lines for what an agent does, and the one-line descriptions of
stuck work and of token use: one wording for every source and every panel."""

from __future__ import annotations

import math
from typing import Final

__all__ = [
    "ORPHANED",
    "PAUSED",
    "RESUMED",
    "RUN_STARTED",
    "added",
    "amount",
    "cost_text",
    "duration",
    "evicted",
    "queued",
    "silent",
    "slow",
    "takeover",
    "turn_started",
    "usage_line",
]

RUN_STARTED: Final = "run started"
PAUSED: Final = "‖ paused"
RESUMED: Final = "▶ resumed"


def turn_started(tool: str) -> str:
    return f"▶ {tool}"


def queued(tool: str) -> str:
    return f"← {tool} queued"


def evicted(store: str, what: str) -> str:
    """``store`` is ``queue`` or ``pool``; ``what`` names the item."""
    return f"♻ {store} evicted {what}"


def added(store: str, what: str) -> str:
    return f"+ {store} {what}"


# -- stuck work ------------------------------------------------------------------------

ORPHANED: Final = "orphaned: its process went quiet"


def duration(seconds: float) -> str:
    """``0.8 s``, ``12 s``, ``4.5 min``, ``2.0 h``: short enough for a status line."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def slow(ratio: float, p95: float, samples: int) -> str:
    """``ratio`` may be huge (or infinite) for a tool whose p95 is next to nothing."""
    times = f"{ratio:.1f}×" if ratio < 1000 else "over 1000×"
    return f"running {times} its tool's p95 (p95 {duration(p95)} over the last {samples})"


def silent(seconds: float) -> str:
    return f"no value for {duration(seconds)}"


def takeover(entries: int) -> str:
    """Redis mailboxes: turns a dead worker holds until a live one claims them."""
    return f"{entries} waiting for takeover (their worker is gone)"


# -- tokens and cost -------------------------------------------------------------------


def amount(number: float) -> str:
    """A count in at most four figures: ``840``, ``12.3k``, ``4.5M``, ``1.2G``."""
    if not math.isfinite(number):
        return "?"
    number = max(0.0, number)
    if number < 999.5:
        return f"{number:.0f}"
    for limit, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        scaled = number / limit
        if scaled < 99.95:
            return f"{scaled:.1f}{suffix}"
        if scaled < 999.5 or suffix == "G":
            return f"{scaled:.0f}{suffix}"
    raise AssertionError("unreachable")  # the last suffix always returns


def cost_text(cost: float, unpriced: int, currency: str = "$") -> str:
    """What was spent, saying so when part of it is not known: tokens of a model with
    no price are not guessed at."""
    if unpriced and not cost:
        return "cost unknown"
    known = f"{currency}{cost:.2f}" if cost >= 0.01 or not cost else f"<{currency}0.01"
    if unpriced:
        return f"{known} + unknown ({amount(unpriced)} tok unpriced)"
    return known


def usage_line(
    tokens: int, per_minute: float, cost: float | None, unpriced: int = 0, currency: str = "$"
) -> str:
    """``12.3k tok · 840 tok/min · $0.42``; ``cost`` ``None`` leaves cost out (no
    price table is configured)."""
    line = f"{amount(tokens)} tok · {amount(per_minute)} tok/min"
    if cost is None:
        return line
    return f"{line} · {cost_text(cost, unpriced, currency)}"
