"""A completion check ends ``run()`` early.

A ``ToolType.COMPLETION_CHECK`` tool returns a ``bool``. The agent does not yield
it: ``True`` ends the run after that turn and leaves the remaining turns queued,
``False`` lets the run go on.

Run with ``uv run python examples/completion_check.py``.
"""

from __future__ import annotations

import asyncio

from pygents import Agent, ContextItem, ContextQueue, ToolType, Turn, tool

TARGET = 10


@tool()
async def collect(amount: int):
    """Collect ``amount`` coins, remembering the running total in the context queue."""
    yield ContextItem(amount)
    yield f"collected {amount}"


@tool(type=ToolType.COMPLETION_CHECK)
async def enough(memory: ContextQueue[int]) -> bool:
    """True once the coins collected so far reach the target."""
    return sum(item.content for item in memory) >= TARGET


async def main() -> None:
    agent = Agent("collector", "Collects coins until it has enough", [collect, enough])
    for amount in (3, 4, 5, 6, 7):
        await agent.put(Turn(collect, kwargs={"amount": amount}))
        await agent.put(Turn(enough))

    async for _, value in agent.run():
        print(value)

    total = sum(item.content for item in agent.context_queue)
    print(f"stopped with {total} coins (target {TARGET})")
    left = [t.kwargs.get("amount") for t in agent.turns if t.tool is collect]
    print(f"{len(agent.turns)} turns left queued; amounts not collected: {left}")

    # The queue is intact: another run() picks up where the check stopped. Each
    # later check still sees >= TARGET, so it stops after one more collect.
    async for _, value in agent.run():
        print("second run:", value)
    print("turns left after the second run:", len(agent.turns))


if __name__ == "__main__":
    asyncio.run(main())
