"""Quick start: two tools, a few turns, one agent streaming ``(turn, value)``.

Run with ``uv run python examples/quickstart.py``.
"""

from __future__ import annotations

import asyncio

from pygents import Agent, StopReason, Turn, tool


@tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool()
async def countdown(start: int):
    """Stream ``start``, ``start - 1``, ... down to 1."""
    for n in range(start, 0, -1):
        await asyncio.sleep(0)
        yield n


async def main() -> None:
    # A turn can be run on its own: returning() for a coroutine tool.
    single = Turn(add, kwargs={"a": 2, "b": 3})
    print("single turn:", await single.returning(), single.stop_reason.value)

    # An agent owns a FIFO queue of turns; a turn names its tool by object or name.
    agent = Agent("calculator", "Adds and counts down", [add, countdown])
    await agent.put(Turn("add", args=[20, 22]))
    await agent.put(Turn(countdown, kwargs={"start": 3}, timeout=5))
    print("queued:", [t.tool.name for t in agent.turns])

    async for turn, value in agent.run():
        print(f"{turn.tool.name} -> {value}")

    print("queue empty:", not agent.turns)
    assert single.stop_reason is StopReason.COMPLETED


if __name__ == "__main__":
    asyncio.run(main())
