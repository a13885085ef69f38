"""The replay feeder: a recording played into the store at a chosen speed, with pause
and seek (`ReplayView` is what the dashboard shows of it)."""

from __future__ import annotations

from pygents_tui.feeders.replay._replay import MAX_SPEED, SPEEDS, Replay
from pygents_tui.feeders.replay._view import ReplayView

__all__ = ["MAX_SPEED", "SPEEDS", "Replay", "ReplayView"]
