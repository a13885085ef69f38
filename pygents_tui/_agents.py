"""What the dashboard keeps of each agent: totals and bounded rings, by name, never the
agent itself; and the agents that have left the registry, kept as such a while.

A service that makes an agent per request (``async with Agent(...)``) unregisters
each one when the request is done, often before the screen has been repainted. The
dashboard lists them anyway — *finished*, dimmed, with their totals — until the user
clears them, so that "9 done" never sits over an empty table. They are bounded: past
`FinishedAgents.limit`, the oldest are forgotten and counted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final

from pygents_tui._records import TurnRecord
from pygents_tui.state import THROUGHPUT_SECONDS, AgentTotals, ValueEntry

__all__ = ["THROUGHPUT_SECONDS", "TURNS_KEPT", "AgentState", "FinishedAgents"]

TURNS_KEPT: Final = 200  # per agent, for the timeline and the inspector
VALUES_KEPT: Final = 500  # per agent, for the values panel


@dataclass(slots=True)
class AgentState(AgentTotals):
    """What the dashboard knows about one agent of this process beyond what it can
    read live: its totals (`AgentTotals`, shared with the fleet's agents), its last
    values and turns, and when it left the registry."""

    name: str
    values_tail: deque[ValueEntry] = field(default_factory=lambda: deque(maxlen=VALUES_KEPT))
    turns: deque[TurnRecord] = field(default_factory=lambda: deque(maxlen=TURNS_KEPT))
    unregistered_at: float | None = None  # when it was seen gone from the registry


class FinishedAgents:
    """The states of the agents that have left the registry, oldest first, at most
    ``limit`` of them; ``dropped`` counts the older ones forgotten to stay so."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"max_finished must be 0 or more, got {limit}")
        self.limit = limit
        self.dropped = 0
        self._states: dict[str, AgentState] = {}

    def __len__(self) -> int:
        return len(self._states)

    def __iter__(self) -> Iterator[AgentState]:
        return iter(self._states.values())

    def __contains__(self, name: object) -> bool:
        return name in self._states

    def follow(
        self, agents: dict[str, AgentState], registered: Callable[[str], bool], at: float
    ) -> bool:
        """Move the states in ``agents`` whose agent has left the registry here, and
        back out of here if their name is registered again (the same name reused);
        forget (from ``agents`` too) the oldest past the limit. True on any change."""
        changed = False
        states = self._states
        for name, state in agents.items():
            if state.unregistered_at is None:
                if not registered(name):
                    state.unregistered_at = at
                    states[name] = state
                    changed = True
            elif registered(name):
                state.unregistered_at = None
                del states[name]
                changed = True
        while len(states) > self.limit:
            del agents[states.pop(next(iter(states))).name]
            self.dropped += 1
        return changed

    def clear(self, agents: dict[str, AgentState]) -> int:
        """Forget every finished agent (from ``agents`` too); how many there were."""
        for name in self._states:
            del agents[name]
        count = len(self._states)
        self._states.clear()
        return count
