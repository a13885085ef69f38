"""The event log's lines for what an agent does, one wording for every source."""

from __future__ import annotations

from typing import Final

__all__ = ["PAUSED", "RESUMED", "RUN_STARTED", "added", "evicted", "queued", "turn_started"]

RUN_STARTED: Final = "run started"
PAUSED: Final = "⏸ paused"
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
