"""Tools that never finish on their own, for the tests of timeouts and cancellation.

Shared by the test directories: ``tests/conftest.py`` puts this directory on
``sys.path``, so a test module imports it as ``from stuck_tools import ...``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from pygents import Agent, DecoratedTool, Turn, TurnTimeoutError, tool
from pygents.testing import drain


def blocking_tool(
    started: asyncio.Event | None = None,
) -> DecoratedTool[[], Coroutine[Any, Any, None]]:
    """A coroutine tool named ``blocks``: it sets ``started`` (if given), then waits until
    something stops it (a timeout, or cancelling the task that runs it)."""
    never = asyncio.Event()

    @tool
    async def blocks() -> None:
        if started is not None:
            started.set()
        await never.wait()

    return blocks


async def time_out_in(agent_name: str) -> None:
    """Run an agent whose only turn, of a tool named ``stuck``, times out."""
    never = asyncio.Event()

    @tool
    async def stuck() -> None:
        await never.wait()

    agent = Agent(agent_name, "Times out", [stuck])
    await agent.put(Turn(stuck, timeout=0.01))
    with pytest.raises(TurnTimeoutError):
        await drain(agent)
