"""The agents of this process that have left the registry, kept listed a while.

A service that makes an agent per request (``async with Agent(...)``) unregisters
each one when the request is done, often before the screen has been repainted. The
dashboard lists them anyway — *finished*, dimmed, with their totals — until the user
clears them, so that "9 done" never sits over an empty table. They are bounded: past
`FinishedAgents.limit`, the oldest are forgotten and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pygents_tui.state import THROUGHPUT_SECONDS, AgentEntry, Store

__all__ = ["THROUGHPUT_SECONDS", "AgentState", "FinishedAgents"]

AgentState = AgentEntry  # the name the in-process agent record had before the one store


class FinishedAgents:
    """The store's agents that have left the registry, oldest first, at most
    ``limit`` of them; ``dropped`` counts the older ones forgotten to stay so."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"max_finished must be 0 or more, got {limit}")
        self.limit = limit
        self.dropped = 0
        self._agents: dict[str, AgentEntry] = {}

    def __len__(self) -> int:
        return len(self._agents)

    def __iter__(self) -> Iterator[AgentEntry]:
        return iter(self._agents.values())

    def __contains__(self, key: object) -> bool:
        return key in self._agents

    def follow(self, store: Store, registered: Callable[[str], bool], at: float) -> bool:
        """Mark the store's agents that have left the registry (`unregistered_at`),
        and unmark them if their name is registered again (the same name reused);
        forget (from the store too) the oldest past the limit. True on any change."""
        changed = False
        left = self._agents
        for key, agent in store.agents.items():
            if agent.unregistered_at is None:
                if not registered(agent.name):
                    store.mark_left(agent, at)
                    left[key] = agent
                    changed = True
            elif registered(agent.name):
                store.mark_left(agent, None)
                del left[key]
                changed = True
        while len(left) > self.limit:
            store.forget_agent(left.pop(next(iter(left))))
            self.dropped += 1
        return changed

    def clear(self) -> int:
        """Forget every finished agent (the store clears them itself); how many
        there were."""
        count = len(self._agents)
        self._agents.clear()
        return count
