"""Routes: where ``agent.send(name, turn)`` goes when the agent runs in another process.

The core only knows in-process agents. A transport (``pygents.redis``) registers a
`Router` here for the agent names it serves remotely, or as the fallback for
every name that is not registered in this process, and ``Agent.send`` asks
`ROUTES` before looking the name up in the ``AgentRegistry``. With nothing
routed, ``send`` pays one truth test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pygents._turn import Turn

__all__ = ["ROUTES", "Router", "Routes"]


class Router(Protocol):
    """Delivers a turn to an agent that is served somewhere else."""

    async def deliver(self, agent_name: str, turn: Turn) -> None: ...


class Routes:
    """Routers by agent name, plus one optional fallback for names not served here."""

    __slots__ = ("by_name", "fallback")

    def __init__(self) -> None:
        self.by_name: dict[str, Router] = {}
        self.fallback: Router | None = None

    def __bool__(self) -> bool:
        return bool(self.by_name) or self.fallback is not None

    def router_for(self, agent_name: str, registered_here: bool) -> Router | None:
        """The router for ``agent_name``: its own one, else the fallback if no agent of
        that name is registered in this process, else ``None`` (send it locally)."""
        found = self.by_name.get(agent_name)
        if found is not None:
            return found
        return None if registered_here else self.fallback

    def add(self, agent_name: str, router: Router) -> None:
        self.by_name[agent_name] = router

    def discard(self, agent_name: str, router: Router) -> None:
        """Forget ``agent_name``'s route if, and only if, it is still ``router``."""
        if self.by_name.get(agent_name) is router:
            del self.by_name[agent_name]


ROUTES = Routes()
"""The routes of this process (set by ``pygents.redis``; empty otherwise)."""
