"""Small text helpers shared by the panels."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

_BLOCKS = " ▁▂▃▄▅▆▇"
"""The sparkline's levels, up to ``▇``: a browser's terminal (xterm.js, ``--web``)
draws block elements to the cell's full height, so full blocks in rows one above
the other merged into large blocks; the top eighth left empty keeps rows apart."""


def sparkline(values: Sequence[int], width: int) -> str:
    """The last ``width`` values as block characters, scaled to their maximum."""
    tail = list(values)[-width:]
    top = max(tail, default=0)
    if top <= 0:
        return "▁" * len(tail)
    levels = len(_BLOCKS) - 1
    return "".join(_BLOCKS[max(1, round(v / top * levels))] if v else "▁" for v in tail)


def bar(fraction: float, width: int) -> str:
    """A horizontal bar ``width`` cells wide, ``fraction`` (0..1) of it filled."""
    fraction = min(max(fraction, 0.0), 1.0)
    filled = round(fraction * width)
    return "█" * filled + "░" * (width - filled)


def seconds(value: float) -> str:
    return f"{value:5.1f}s" if value < 100 else f"{value:5.0f}s"


Legend = tuple[tuple[str, str], ...]  # (symbol or header, what it means)


def legend(entries: Legend) -> Text:
    """``symbol  meaning`` lines, the symbols in bold (styled spans, never markup)."""
    text = Text()
    width = max((len(symbol) for symbol, _ in entries), default=0)
    for index, (symbol, meaning) in enumerate(entries):
        if index:
            text.append("\n")
        text.append(symbol.ljust(width), style="bold")
        text.append(f"  {meaning}")
    return text
