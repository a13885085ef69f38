"""Helpers for the dashboard's Pilot tests (tests/tui only): an app with animations
off, a collector of its notifications, and an agent with numbered turns to run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual.message import Message
from textual.notifications import Notify

from pygents import Agent, Turn, tool
from pygents_tui import Dashboard


def dashboard(*args: Any, **kwargs: Any) -> Dashboard:
    """A Dashboard with animations off, so that key presses do not wait on them."""
    app = Dashboard(*args, **kwargs)
    app.animation_level = "none"
    return app


class Notes:
    """Collects the app's notifications (a ``run_test`` message hook)."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.messages.append(message.notification.message)

    def __contains__(self, text: str) -> bool:
        return any(text in m for m in self.messages)


def numbered(name: str, turns: int) -> tuple[Agent, Callable[[], Awaitable[None]]]:
    """An agent whose tool returns its argument, and the workload that puts ``turns``
    turns (0, 1, ...) in its queue and runs them."""

    @tool()
    async def job(n: int) -> int:
        return n

    agent = Agent(name, "numbered turns", [job])

    async def workload() -> None:
        for n in range(turns):
            await agent.put(Turn(job, args=[n]))
        async for _ in agent.run():
            pass

    return agent, workload
