"""Small text helpers shared by the panels."""

from __future__ import annotations

from collections.abc import Sequence

_BLOCKS = " ▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[int], width: int) -> str:
    """The last ``width`` values as block characters, scaled to their maximum."""
    tail = list(values)[-width:]
    top = max(tail, default=0)
    if top <= 0:
        return "▁" * len(tail)
    return "".join(_BLOCKS[max(1, round(v / top * 8))] if v else "▁" for v in tail)


def bar(fraction: float, width: int) -> str:
    """A horizontal bar ``width`` cells wide, ``fraction`` (0..1) of it filled."""
    fraction = min(max(fraction, 0.0), 1.0)
    filled = round(fraction * width)
    return "█" * filled + "░" * (width - filled)


def seconds(value: float) -> str:
    return f"{value:5.1f}s" if value < 100 else f"{value:5.0f}s"
